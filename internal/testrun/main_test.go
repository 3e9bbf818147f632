package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestReportCountsByStoreAndShowsOnlyFailures feeds the runner go test's
// events for a package with a failing SQLite subtest, a passing PostgreSQL
// one and a test of the PostgreSQL store's package.
func TestReportCountsByStoreAndShowsOnlyFailures(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"run","Package":"m/a","Test":"TestX"}`,
		`{"Action":"run","Package":"m/a","Test":"TestX/sqlite"}`,
		`{"Action":"output","Package":"m/a","Test":"TestX/sqlite","Output":"    boom\n"}`,
		`{"Action":"fail","Package":"m/a","Test":"TestX/sqlite"}`,
		`{"Action":"run","Package":"m/a","Test":"TestX/postgres"}`,
		`{"Action":"output","Package":"m/a","Test":"TestX/postgres","Output":"    quiet\n"}`,
		`{"Action":"pass","Package":"m/a","Test":"TestX/postgres"}`,
		`{"Action":"fail","Package":"m/a","Test":"TestX"}`,
		`{"Action":"output","Package":"m/a","Output":"PASS\n"}`,
		`{"Action":"output","Package":"m/a","Output":"FAIL\tm/a\t0.1s\n"}`,
		`{"Action":"run","Package":"m/runtime/durable/store/postgres","Test":"TestY"}`,
		`{"Action":"pass","Package":"m/runtime/durable/store/postgres","Test":"TestY"}`,
		`{"Action":"run","Package":"m/b","Test":"TestZ"}`,
		`{"Action":"skip","Package":"m/b","Test":"TestZ"}`,
		`go: a line that is not an event`,
	}, "\n")
	var out bytes.Buffer
	r := newReport(&out)
	if err := r.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	r.summary("PostgreSQL 15, here")
	got := out.String()
	for _, want := range []string{"    boom\n", "FAIL\tm/a\t0.1s\n", "go: a line that is not an event\n",
		"tests: 4 (2 passed, 1 failed, 1 skipped); on SQLite 1, on PostgreSQL 2, on no store 0\n",
		"PostgreSQL: PostgreSQL 15, here\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{"quiet", "PASS\n"} {
		if strings.Contains(got, unwanted) {
			t.Errorf("the report shows %q (a passing test's output or a bare PASS):\n%s", unwanted, got)
		}
	}
}
