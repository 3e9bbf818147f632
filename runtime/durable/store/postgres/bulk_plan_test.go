package postgres

// The bulk statements (bulk.go) join the plan test: each text of each
// shape must be sent by the store suite, and the cancels run without JIT
// like CancelRun.
func init() {
	sqlConstants["pgBulkRange"] = []string{pgBulkRange}
	sqlConstants["pgBulkCount"] = pgBulkCount[:]
	sqlConstants["pgBulkRetry"] = pgBulkRetry[:]
	sqlConstants["pgBulkRelease"] = pgBulkRelease[:]
	sqlConstants["pgBulkCancel"] = pgBulkCancel[:]
	sqlConstants["pgRetrySets"] = []string{pgRetrySets}
	sqlConstants["pgCancelSets"] = []string{pgCancelSets}
	sqlConstants["pgReleaseRunSets"] = []string{pgReleaseRunSets}
	for _, sql := range pgBulkCancel {
		withoutJITStatements[sql] = true
	}
}
