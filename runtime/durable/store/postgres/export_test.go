package postgres

// The statements the operations benchmarks (ops_bench_test.go, package
// postgres_test) explain.
var (
	ClaimPinnedSQL  = pgClaimPinned
	RunColumns      = pgRunColumns
	CompactBatchSQL = pgCompactBatch
	ListDialect     = listDialect
)
