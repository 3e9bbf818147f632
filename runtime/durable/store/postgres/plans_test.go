package postgres

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/durable/store"
	"skydurable/runtime/durable/store/storetest"
)

// statementLog keeps every statement a workload sent, with the arguments
// of its first use, in the order first seen.
type statementLog struct {
	mu    sync.Mutex
	order []string
	args  map[string][]any
}

func (l *statementLog) observe(e db.Event) {
	if e.Kind != db.Statement {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.add(e.SQL, slices.Clone(e.Args))
}

// add keeps sql with args unless l has seen it.
func (l *statementLog) add(sql string, args []any) {
	if l.args == nil {
		l.args = map[string][]any{}
	}
	if _, seen := l.args[sql]; !seen {
		l.order = append(l.order, sql)
		l.args[sql] = args
	}
}

// TestStoreConformance runs the shared store suite on PostgreSQL, keeping
// every statement the store sent; then checks the plan of each
// (checkStatementPlans).
func TestStoreConformance(t *testing.T) {
	var mu sync.Mutex
	logs := map[string]*statementLog{} // by case name
	storetest.Run(t, func(t *testing.T) (store.Store, *db.DB) {
		d := dbtest.Open(t, "postgres")
		log := &statementLog{}
		mu.Lock()
		logs[path.Base(t.Name())] = log
		mu.Unlock()
		stop := d.Observe(log.observe)
		t.Cleanup(stop)
		return New(d, func(string, string) {}), d
	})
	if len(logs) < storetest.Cases() {
		t.Logf("the plans are checked after the whole suite; %d of its %d cases ran", len(logs), storetest.Cases())
		return
	}
	// The cases ran at once; each statement is explained with the
	// arguments of its first use in the suite's order, as if they had not.
	var log statementLog
	for _, name := range storetest.CaseNames() {
		log.merge(logs[name])
	}
	t.Run("every statement has a stable plan", func(t *testing.T) { checkStatementPlans(t, &log) })
}

// merge adds the statements of other that l has not seen, in other's order.
func (l *statementLog) merge(other *statementLog) {
	if other == nil {
		return
	}
	for _, sql := range other.order {
		l.add(sql, other.args[sql])
	}
}

// badPlan is what no plan of the engine may show: JIT compilation (its
// cost is paid on every execution and dwarfs the statements' own, which
// read a few index pages) or a sequential scan of a table that grows with
// the runs.
var badPlan = regexp.MustCompile(`JIT:|Seq Scan on _sky_durable_(runs|journal|signals|events|history)\b`)

// wholeTable are the statements that read every run by nature, with why
// that is acceptable: their sequential scan is the plan they should have.
var wholeTable = map[string]string{
	pgStatsCounts: "the overview's count of runs by workflow and status (sky durable stats, the dashboard's overview) " +
		"counts every run; compaction bounds it (docs/scaling.md)",
}

// wantIndex names, for a statement holding a SQL fragment, the index its
// plan must read at 100,000 rows: a search with no other filter reads the
// finished runs from the trigram index (walking another index, testing each
// run, would read every finished run for a rare text). With a status,
// workflow or page filter as well, the planner may read that filter's index
// instead when it deems it the more selective; no plan may read the table.
var wantIndex = map[string]string{
	`NOT IN (` + store.SQLClaimable + `) AND (SELECT COUNT(*) FROM recent WHERE hit) < ? AND ` + pgSearchMatch + `) SELECT`: "_sky_durable_runs_search",
}

// planExempt are statements whose plan is not the engine's concern: the
// schema's set-up (migrations, their bookkeeping) and session settings.
func planExempt(sql string) bool {
	if schemaChange.MatchString(sql) || strings.HasPrefix(strings.TrimSpace(sql), "SET ") {
		return true
	}
	return strings.Contains(sql, store.VersionTable) || strings.Contains(sql, "pg_advisory_xact_lock(7362201555)") ||
		strings.Contains(sql, "pg_tables") || strings.Contains(sql, "pg_trigger")
}

// schemaChange finds a migration script's statements.
var schemaChange = regexp.MustCompile(`(?m)^\s*(CREATE|ALTER|DROP|DO|COMMENT)\b`)

// checkStatementPlans runs EXPLAIN on every statement in log at 0 and
// 100,000 rows (runs, journal and signals), before and after ANALYZE, with
// the server's default settings (jit on), as a generic plan (what a pooled
// connection's prepared statement settles on) and as a custom one, and
// fails on badPlan. It also fails when a SQL constant of this package was
// not sent by the suite, so no statement escapes the check.
func checkStatementPlans(t *testing.T, log *statementLog) {
	ctx := context.Background()
	checkEveryConstantSent(t, log)
	d := dbtest.Open(t, "postgres")
	if err := New(d, nil).Setup(ctx); err != nil {
		t.Fatal(err)
	}
	// At 0 rows only JIT is a fault: a sequential scan of an empty table
	// reads no page, and PostgreSQL plans again when autovacuum's ANALYZE
	// records the table's growth. The case that hurts, a table grown
	// before any statistics, is the second stage.
	stages := []struct {
		name, sql string
		seqScans  bool
	}{
		{"0 rows", ``, false},
		{"100,000 rows, no statistics", fillRuns, true},
		{"100,000 rows, analyzed", `ANALYZE _sky_durable_runs; ANALYZE _sky_durable_journal; ANALYZE _sky_durable_signals; ANALYZE _sky_durable_events`, true},
	}
	checked := 0
	for _, st := range stages {
		if st.sql != "" {
			if _, err := d.ExecRaw(ctx, st.sql); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
		}
		for _, sql := range log.order {
			if planExempt(sql) {
				continue
			}
			for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
				for _, args := range withFloors(sql, log.args[sql]) {
					plan, err := explain(ctx, d, sql, args, mode, withoutJITStatements[sql])
					if err != nil {
						t.Errorf("%s, %s: EXPLAIN failed: %v\n%s", st.name, mode, err, sql)
						continue
					}
					checked++
					if m := badPlan.FindString(plan); m != "" && (m == "JIT:" || st.seqScans && wholeTable[sql] == "") {
						t.Errorf("%s, %s: the plan shows %q:\n%s\n%s", st.name, mode, m, sql, plan)
					}
					for part, index := range wantIndex {
						if st.seqScans && strings.Contains(sql, part) && !strings.Contains(plan, index) {
							t.Errorf("%s, %s: the plan does not read %s:\n%s\n%s", st.name, mode, index, sql, plan)
						}
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no statement was checked")
	}
	t.Logf("%d plans of %d statements checked", checked, len(log.order))
}

// floorParams are the parameters of the claim floors (floors.go) by the
// SQL that takes each, with a value that sets them: the suite's claims run
// on a test clock, without floors, and the plan of each statement with
// them is checked too.
var floorParams = map[string]any{
	`floors AS (SELECT CAST(? AS JSON) AS f)`: `[{"k":-2,"lo":"2026-01-01T00:00:00Z"},{"k":-1,"lo":"2026-01-01T00:00:00Z"},` +
		`{"k":0,"lo":"2026-01-01T00:00:00Z"},{"k":1,"lo":"2026-01-01T00:00:00Z"}]`,
	`AND r.wake_at >= COALESCE(CAST(? AS TIMESTAMPTZ), '-infinity')`: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
}

// withFloors is args, then args with the floor parameters of sql set when
// it takes any.
func withFloors(sql string, args []any) [][]any {
	out := [][]any{args}
	set := slices.Clone(args)
	changed := false
	for part, v := range floorParams {
		if i := strings.Index(sql, part); i >= 0 {
			if n := strings.Count(sql[:i], "?"); n < len(set) {
				set[n], changed = v, true
			}
		}
	}
	if changed {
		out = append(out, set)
	}
	return out
}

// fillRuns makes the tables the size of a busy installation: 100,000 runs
// (60,000 finished, 1,000 of them the children of 10 parents; 30,000
// waiting, most in the future, some on a signal; 5,000 failed, 5,000 with
// a deadline), five journal rows and five history events each for 20,000
// of them, and 100,000 signals and events.
const fillRuns = `
INSERT INTO _sky_durable_runs (id, workflow, status, input, wake_at, created_at, updated_at, parent_id, child_group, deadline_at, waiting_signal, priority, limit_key)
SELECT 'fill' || g, 'w' || (g % 7),
       CASE WHEN g <= 60000 THEN 'done' WHEN g <= 90000 THEN 'waiting' WHEN g <= 95000 THEN 'failed' ELSE 'waiting' END,
       '""',
       CASE WHEN g <= 60000 OR (g > 80000 AND g <= 90000) THEN 'infinity'::timestamptz ELSE now() + (g || ' seconds')::interval END,
       now(), now(),
       CASE WHEN g <= 1000 THEN 'fill' || (60000 + g % 10) END,
       CASE WHEN g <= 1000 THEN 'fill' || (60000 + g % 10) || '/0' END,
       CASE WHEN g > 95000 THEN now() + interval '1 hour' END,
       CASE WHEN g > 80000 AND g <= 90000 THEN 'approved' END,
       g % 3, 'k' || (g % 50)
  FROM generate_series(1, 100000) g;
INSERT INTO _sky_durable_journal (run_id, step_id, seq, kind, result, created_at)
SELECT 'fill' || (g / 5 + 1), 's' || (g % 5), g % 5 + 1, 'step', '"x"', now() FROM generate_series(0, 99999) g;
INSERT INTO _sky_durable_signals (run_id, name, payload, delivered, created_at)
SELECT 'fill' || g, 'approved', '{}', g % 2 = 0, now() FROM generate_series(1, 100000) g;
INSERT INTO _sky_durable_events (run_id, key, value, updated_at)
SELECT 'fill' || g, 'progress', '1', now() FROM generate_series(1, 100000) g;
INSERT INTO _sky_durable_history (run_id, pos, at, kind, actor, attempt, detail, step)
SELECT 'fill' || (g / 5 + 1), g % 5 + 1, now(), 'claimed', 'w', 1, '', '' FROM generate_series(0, 99999) g;`

// withoutJITStatements are the statements the store runs in withoutJIT's
// transaction (jit off): the recursive walks of a run's descendants.
var withoutJITStatements = map[string]bool{pgCancel: true, pgTimeOutRuns: true}

// explain prepares sql and explains its execution with args under
// plan_cache_mode (and jit off when noJIT), in a transaction it rolls back.
func explain(ctx context.Context, d *db.DB, sql string, args []any, mode string, noJIT bool) (string, error) {
	lits := make([]string, len(args))
	for i, a := range args {
		lit, err := literal(a)
		if err != nil {
			return "", err
		}
		lits[i] = lit
	}
	var plan strings.Builder
	rollback := errors.New("rollback")
	err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		// A prepared statement outlives the transaction: each gets a new name.
		name := "plan_check" + strconv.FormatInt(preparedNames.Add(1), 10)
		settings := "SET LOCAL plan_cache_mode = " + mode + "; "
		if noJIT {
			settings += "SET LOCAL jit = off; "
		}
		if _, err := tx.ExecRaw(ctx, settings+"PREPARE "+name+" AS "+numbered(sql)); err != nil {
			return err
		}
		exec := "EXPLAIN EXECUTE " + name
		if len(lits) > 0 {
			exec += "(" + strings.Join(lits, ", ") + ")"
		}
		rows, err := tx.QueryMaps(ctx, exec)
		if err != nil {
			return err
		}
		for _, r := range rows {
			plan.WriteString(r["QUERY PLAN"] + "\n")
		}
		return rollback
	})
	if !errors.Is(err, rollback) {
		return plan.String(), err
	}
	return plan.String(), nil
}

// literal writes an argument as the SQL literal EXECUTE takes.
func literal(a any) (string, error) {
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	switch v := a.(type) {
	case nil:
		return "NULL", nil
	case string:
		return quote(v), nil
	case []byte:
		return quote(string(v)), nil
	case bool:
		return fmt.Sprint(v), nil
	case int, int32, int64, uint32, uint64, float64:
		return fmt.Sprint(v), nil
	case time.Time:
		return quote(v.UTC().Format(time.RFC3339Nano)), nil
	case time.Duration:
		return fmt.Sprint(v.Milliseconds()), nil
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
		}
		return quote("{" + strings.Join(parts, ",") + "}"), nil
	}
	return "", fmt.Errorf("no literal for an argument of type %T: %v", a, a)
}

// checkEveryConstantSent fails for each top-level SQL constant (pg...) of
// the package's code that no statement of log contains: a statement the
// suite does not reach has an unchecked plan.
func checkEveryConstantSent(t *testing.T, log *statementLog) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	values := map[string][]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, spec := range g.Specs {
				for _, n := range spec.(*ast.ValueSpec).Names {
					if strings.HasPrefix(n.Name, "pg") {
						values[n.Name] = nil
					}
				}
			}
		}
	}
	for name, sql := range sqlConstants {
		if _, ok := values[name]; !ok {
			t.Errorf("sqlConstants names %s, which is not a constant of the package", name)
		}
		values[name] = sql
	}
	all := strings.Join(log.order, "\n;\n")
	for name, sqls := range values {
		if sqls == nil {
			t.Errorf("the SQL constant %s is not in sqlConstants (plans_test.go): add it, so the plan test knows it", name)
		}
		for i, sql := range sqls {
			if !strings.Contains(all, strings.TrimSpace(sql)) {
				if len(sqls) > 1 {
					name += fmt.Sprintf("[%d]", i)
				}
				t.Errorf("the store suite never sends %s, so its plan is not checked: add a storetest case that does", name)
			}
		}
	}
}

// sqlConstants are the package's SQL constants by name (checkEveryConstantSent
// finds them in the source: a new one must be added here); a variable
// holding several texts lists each.
var sqlConstants = map[string][]string{
	"pgResealSQL": {pgResealSQL.RunsAfter, pgResealSQL.Payloads, pgResealSQL.Swap[store.PlaceInput], pgResealSQL.Swap[store.PlaceOutput],
		pgResealSQL.Swap[store.PlaceJournal], pgResealSQL.Swap[store.PlaceSignal], pgResealSQL.Swap[store.PlaceEvent], pgResealSQL.Swap[store.PlaceSchedule]},
	"pgTimeTravel": {pgTimeTravel.InsertFork, pgTimeTravel.ForkJournal, pgTimeTravel.ForkSet, pgTimeTravel.ForkSignals,
		pgTimeTravel.ForkEvents, pgTimeTravel.CutChildren, pgTimeTravel.ForkChildren, pgTimeTravel.ForkChildJournals,
		pgTimeTravel.RewindLock, pgTimeTravel.RewindChild, pgTimeTravel.RewindJournal, pgTimeTravel.RewindSignals,
		pgTimeTravel.RewindEvents, pgTimeTravel.ResetRun},
	"pgClaimHistory":             {pgClaimHistory},
	"pgDoneHistory":              {pgDoneHistory},
	"pgParkedHistory":            {pgParkedHistory},
	"pgPriorAttempts":            {pgPriorAttempts},
	"pgRecordEvent":              {pgRecordEvent},
	"pgReadHistory":              {pgReadHistory},
	"pgDeleteHistory":            {pgDeleteHistory},
	"pgList":                     {pgList},
	"pgHintFunction":             {pgHintFunction},
	"pgHintTrigger":              {pgHintTrigger},
	"pgDoneFunction":             {pgDoneFunction},
	"pgDoneTrigger":              {pgDoneTrigger},
	"pgHasTrigger":               {pgHasTrigger},
	"pgTriggerLock":              {pgTriggerLock},
	"pgProbe":                    {pgProbe},
	"pgNextToken":                {pgNextToken},
	"pgStatsHolds":               {pgStatsHolds},
	"pgWorkflowNames":            {pgWorkflowNames},
	"pgStatsHeld":                {pgStatsHeld},
	"pgStatsHeldCount":           {pgStatsHeldCount},
	"pgStatsDueRun":              {pgStatsDueRun},
	"pgAdmit":                    {pgAdmit},
	"pgAnyOverdue":               {pgAnyOverdue},
	"pgAnyScheduleDue":           {pgAnyScheduleDue},
	"pgAppend":                   {pgAppend},
	"pgAwaitChild":               {pgAwaitChild},
	"pgAwaitGroup":               {pgAwaitGroup},
	"pgBeforeDeadline":           {pgBeforeDeadline},
	"pgCancel":                   {pgCancel},
	"pgCancelDescendants":        {pgCancelDescendants},
	"pgClaim":                    {pgClaim},
	"pgClaimAdmitted":            {pgClaimAdmitted},
	"pgClaimAdmittedGated":       {pgClaimAdmittedGated},
	"pgClaimAdmittedGatedPinned": {pgClaimAdmittedGatedPinned},
	"pgClaimAdmittedPinned":      {pgClaimAdmittedPinned},
	"pgClaimBeforeDeadline":      {pgClaimBeforeDeadline},
	"pgClaimCTE":                 {pgClaimCTE},
	"pgClaimFloorRows":           {pgClaimFloorRows},
	"pgClaimClock":               {pgClaimClock},
	"pgClaimPicked":              {pgClaimPicked},
	"pgClaimPinned":              {pgClaimPinned},
	"pgClaimSets":                {pgClaimSets},
	"pgClock":                    {pgClock},
	"pgClockCTE":                 {pgClockCTE},
	"pgCreatedAt":                {pgCreatedAt},
	"pgCompactBatch":             {pgCompactBatch},
	"pgTakeTurn":                 {pgTakeTurn},
	"pgDoneCount":                {pgDoneCount},
	"pgRecordPriorDone":          {pgRecordPriorDone},
	"pgNoRun":                    {pgNoRun},
	"pgOrphanSignals":            {pgOrphanSignals},
	"pgExpireOrphanSignals":      {pgExpireOrphanSignals},
	"pgComplete":                 {pgComplete},
	"pgCompleteClaimByName":      pgCompleteClaimByName[:],
	"pgCompleteClaimByVersion":   pgCompleteClaimByVersion[:],
	"pgCompleteWith":             {pgCompleteWith},
	"pgDeclareLimits":            {pgDeclareLimits},
	"pgDeleteJournal":            {pgDeleteJournal},
	"pgDeleteSchedule":           {pgDeleteSchedule},
	"pgDeleteSignals":            {pgDeleteSignals},
	"pgDone":                     {pgDone},
	"pgDropLimits":               {pgDropLimits},
	"pgDueBacklog":               {pgDueBacklog},
	"pgDueSchedules":             {pgDueSchedules},
	"pgFail":                     {pgFail},
	"pgFinishedRun":              {pgFinishedRun},
	"pgFlowStates":               {pgFlowStates},
	"pgSaveRates":                {pgSaveRates},
	"pgRestoreRate":              {pgRestoreRate},
	"pgGate":                     {pgGate},
	"pgGateAlso":                 {pgGateAlso},
	"pgGetEvent":                 {pgGetEvent},
	"pgInsertChildren":           {pgInsertChildren},
	"pgInsertRun":                {pgInsertRun},
	"pgInsertClaimed":            {pgInsertClaimed},
	"pgNewRun":                   {pgNewRun},
	"pgListSchedules":            {pgListSchedules},
	"pgListSignals":              {pgListSignals},
	"pgLoadJournal":              {pgLoadJournal},
	"pgLoadSnapshot":             {pgLoadSnapshot},
	"pgLockAnyRun":               {pgLockAnyRun},
	"pgLockRun":                  {pgLockRun},
	"pgLockUnfinishedChild":      {pgLockUnfinishedChild},
	"pgLockUnfinishedGroup":      {pgLockUnfinishedGroup},
	"pgMarkDelivered":            {pgMarkDelivered},
	"pgNow":                      {pgNow},
	"pgPickByName":               {pgPickByName},
	"pgPickByVersion":            {pgPickByVersion},
	"pgClaimLevels":              {pgClaimLevels},
	"pgPutEvent":                 {pgPutEvent},
	"pgPutSchedule":              {pgPutSchedule},
	"pgPutSignal":                {pgPutSignal},
	"pgReadChildren":             {pgReadChildren},
	"pgReadRun":                  {pgReadRun},
	"pgReadSignal":               {pgReadSignal},
	"pgRefused":                  {pgRefused},
	"pgRelease":                  {pgRelease},
	"pgReleaseRun":               {pgReleaseRun},
	"pgRenewLease":               {pgRenewLease},
	"pgReplaceSignal":            {pgReplaceSignal},
	"pgRetry":                    {pgRetry},
	"pgRunColumns":               {pgRunColumns},
	"pgRunWorkflow":              {pgRunWorkflow},
	"pgSaveSnapshot":             {pgSaveSnapshot},
	"pgScheduleColumns":          {pgScheduleColumns},
	"pgScheduleFired":            {pgScheduleFired},
	"pgStampCompacted":           {pgStampCompacted},
	"pgStatsCounts":              {pgStatsCounts},
	"pgStatsDue":                 {pgStatsDue},
	"pgStatsFinished":            {pgStatsFinished},
	"pgStatsNow":                 {pgStatsNow},
	"pgStatsStarted":             {pgStatsStarted},
	"pgStatsStuck":               {pgStatsStuck},
	"pgSuspend":                  {pgSuspend},
	"pgSweepLock":                {pgSweepLock},
	"pgTimeOutRuns":              {pgTimeOutRuns},
	"pgWake":                     {pgWake},
	"pgWakeForSignal":            {pgWakeForSignal},
	"pgSearchMatch":              {pgSearchMatch},
}
