package db

import (
	"strings"
	"testing"
)

func TestPoolerResolve(t *testing.T) {
	cases := []struct {
		setting, dsn string
		want         Pooler
	}{
		{"", "postgres://u@h:6432/d", PoolerTransaction},
		{"", "postgres://u@h:5432/d", PoolerNone},
		{"", "postgres://u@h/d", PoolerNone},
		{"TRANSACTION", "postgres://u@h:5432/d", PoolerTransaction},
		{"none", "postgres://u@h:6432/d", PoolerNone},
		{" session ", "postgres://u@h:6432/d", PoolerSession},
	}
	for _, c := range cases {
		p, err := ParsePooler(c.setting)
		if err != nil {
			t.Fatalf("ParsePooler(%q): %v", c.setting, err)
		}
		if got := p.Resolve(c.dsn); got != c.want {
			t.Errorf("ParsePooler(%q).Resolve(%q) = %q, want %q", c.setting, c.dsn, got, c.want)
		}
	}
}

func TestParsePoolerNamesTheBadValue(t *testing.T) {
	_, err := ParsePooler("statement")
	if err == nil || !strings.Contains(err.Error(), `SKY_DB_POOLER="statement"`) || !strings.Contains(err.Error(), "hint:") {
		t.Fatalf("error %v, want one naming SKY_DB_POOLER=\"statement\" with a hint", err)
	}
}
