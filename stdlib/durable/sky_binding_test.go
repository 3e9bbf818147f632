package durable

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable"
	"skydurable/runtime/project"
	"skydurable/runtime/value"
)

// TestBindingEngineCacheSkipsTransactions checks that the Sky binding keeps
// one engine per database but none for the short-lived Db of a transaction,
// which would otherwise pile up in a worker that starts or signals runs
// inside Durable.transaction or Db.withTransaction.
func TestBindingEngineCacheSkipsTransactions(t *testing.T) {
	ctx := context.Background()
	d, err := db.Open(ctx, "sqlite", filepath.Join(t.TempDir(), "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	b := &binding{engines: map[*db.DB]*durable.Engine{}}

	if first, again := b.engineFor(d), b.engineFor(d); first != again {
		t.Fatalf("two engines for one database: %p and %p", first, again)
	}
	for i := 0; i < 3; i++ {
		err := d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
			if e := b.engineFor(tx); e.DB() != tx {
				t.Errorf("the engine of a transaction works on %p, want the transaction %p", e.DB(), tx)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(b.engines) != 1 {
		t.Fatalf("the binding caches %d engines after 3 transactions, want 1 (the database's own)", len(b.engines))
	}
}

// TestRetryPolicyArgClampsHugeBackoff checks that a RetryPolicy from Sky with
// backoffs too long for a time.Duration keeps a huge backoff instead of
// overflowing to a negative one that silently became the 5-minute default.
func TestRetryPolicyArgClampsHugeBackoff(t *testing.T) {
	p, err := retryPolicyArg(value.NewRecord(map[string]value.Value{
		"maxAttempts":      int64(3),
		"initialBackoffMs": int64(math.MaxInt64),
		"maxBackoffMs":     int64(math.MaxInt64),
	}))
	if err != nil {
		t.Fatal(err)
	}
	if century := 100 * 365 * 24 * time.Hour; p.InitialBackoff < century || p.MaxBackoff < century || p.MaxAttempts != 3 {
		t.Fatalf("policy %+v, want 3 attempts and backoffs over a century", p)
	}
}

// TestOptionsFromEnv: sky programs set the lease and the payload cap from
// the environment; a malformed value is named on the warning stream and the
// default kept.
func TestOptionsFromEnv(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	var warn strings.Builder
	opts := OptionsFromEnvTo(env(map[string]string{"SKY_DURABLE_LEASE": "45s", "SKY_DURABLE_MAX_PAYLOAD_BYTES": "4194304", "SKY_DURABLE_LOG": "off"}), &warn)
	if opts.Lease != 45*time.Second || opts.MaxPayloadBytes != 4194304 || warn.Len() != 0 {
		t.Errorf("lease %v, cap %d, warnings %q; want 45s, 4194304, none", opts.Lease, opts.MaxPayloadBytes, warn.String())
	}
	opts = OptionsFromEnvTo(env(map[string]string{"SKY_DURABLE_LEASE": "soon", "SKY_DURABLE_MAX_PAYLOAD_BYTES": "4MB", "SKY_DURABLE_LOG": "off"}), &warn)
	if opts.Lease != 0 || opts.MaxPayloadBytes != 0 {
		t.Errorf("malformed values set lease %v, cap %d; want the defaults (0)", opts.Lease, opts.MaxPayloadBytes)
	}
	for _, want := range []string{`SKY_DURABLE_LEASE="soon" is not a positive duration`, `SKY_DURABLE_MAX_PAYLOAD_BYTES="4MB" is not a positive number of bytes`} {
		if !strings.Contains(warn.String(), want) {
			t.Errorf("warnings %q do not mention %q", warn.String(), want)
		}
	}
}

// TestLogFormatSetting: SKY_LOG_FORMAT json gives JSON lines, text or
// unset plain text, and any other value is named on the warning stream
// (text kept) rather than silently ignored.
func TestLogFormatSetting(t *testing.T) {
	for _, c := range []struct{ format, line, warn string }{
		{"json", `{"time":`, ""},
		{"JSON", `{"time":`, ""},
		{"", "time=", ""},
		{"text", "time=", ""},
		{"jsn", "time=", `SKY_LOG_FORMAT="jsn" is not a log format (json, text); using text`},
	} {
		var out, warn strings.Builder
		env := map[string]string{"SKY_DURABLE_LOG": "info", "SKY_LOG_FORMAT": c.format}
		loggerFromEnv(func(k string) string { return env[k] }, &out, &warn).Info("durable run done")
		if !strings.HasPrefix(out.String(), c.line) || !strings.Contains(warn.String(), c.warn) || (c.warn == "") != (warn.Len() == 0) {
			t.Errorf("SKY_LOG_FORMAT=%q: line %q, warning %q; want a line starting %q and warning %q", c.format, out.String(), warn.String(), c.line, c.warn)
		}
	}
}

// TestLogLevelSetting: a SKY_DURABLE_LOG that is not a level is named on
// the warning stream and the default (warn) kept, as every other malformed
// setting keeps its default: a typo must not turn on every info line.
func TestLogLevelSetting(t *testing.T) {
	for _, c := range []struct {
		level, warn string
		info        bool
	}{
		{"", "", false},
		{"info", "", true},
		{"INFO", "", true},
		{"inf", `SKY_DURABLE_LOG="inf" is not a level (debug, info, warn, error, off); using warn`, false},
	} {
		var out, warn strings.Builder
		env := map[string]string{"SKY_DURABLE_LOG": c.level}
		log := loggerFromEnv(func(k string) string { return env[k] }, &out, &warn)
		log.Info("durable run done")
		log.Warn("durable attempt failed")
		if got := strings.Contains(out.String(), "durable run done"); got != c.info || !strings.Contains(out.String(), "durable attempt failed") {
			t.Errorf("SKY_DURABLE_LOG=%q: lines %q; want the warning, and the info line %v", c.level, out.String(), c.info)
		}
		if !strings.Contains(warn.String(), c.warn) || (c.warn == "") != (warn.Len() == 0) {
			t.Errorf("SKY_DURABLE_LOG=%q: warning %q, want %q", c.level, warn.String(), c.warn)
		}
	}
}

// TestRetentionSettings: [durable] retention and orphan_signal_ttl of
// sky.toml set the engine's, the environment wins over them, and a
// malformed or overflowing value is named on the warning stream and
// ignored.
func TestRetentionSettings(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	file := project.File{DurableRetention: "30d", DurableOrphanSignalTTL: "48h"}
	var warn strings.Builder
	opts := WithProject(OptionsFromEnvTo(env(map[string]string{"SKY_DURABLE_LOG": "off"}), &warn), file, env(nil), &warn)
	if opts.Retention != 30*24*time.Hour || opts.OrphanSignalTTL != 48*time.Hour || warn.Len() != 0 {
		t.Errorf("from sky.toml: retention %v, ttl %v, warnings %q; want 720h, 48h, none", opts.Retention, opts.OrphanSignalTTL, warn.String())
	}
	over := env(map[string]string{"SKY_DURABLE_RETENTION": "90m", "SKY_DURABLE_LOG": "off"})
	opts = WithProject(OptionsFromEnvTo(over, &warn), file, over, &warn)
	if opts.Retention != 90*time.Minute || opts.OrphanSignalTTL != 48*time.Hour {
		t.Errorf("environment over sky.toml: retention %v, ttl %v; want 90m, 48h", opts.Retention, opts.OrphanSignalTTL)
	}
	opts = WithProject(durable.Options{}, project.File{DurableRetention: "9999999999d", DurableOrphanSignalTTL: "soon"}, env(nil), &warn)
	if opts.Retention != 0 || opts.OrphanSignalTTL != 0 {
		t.Errorf("malformed values set retention %v, ttl %v; want them ignored", opts.Retention, opts.OrphanSignalTTL)
	}
	for _, want := range []string{`sky.toml [durable] retention "9999999999d" is too long`, `sky.toml [durable] orphan_signal_ttl "soon" is not a duration`} {
		if !strings.Contains(warn.String(), want) {
			t.Errorf("warnings %q do not mention %q", warn.String(), want)
		}
	}
}

// TestNamespaceSetting: [durable] namespace of sky.toml sets the engine's,
// SKY_DURABLE_NAMESPACE wins over it, and neither is checked here: a name
// that is not valid is the engine's error at Setup (never a silent fallback
// to another namespace).
func TestNamespaceSetting(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	file := project.File{DurableNamespace: "billing"}
	var warn strings.Builder
	if opts := WithProject(OptionsFromEnvTo(env(nil), &warn), file, env(nil), &warn); opts.Namespace != "billing" {
		t.Errorf("from sky.toml: namespace %q, want billing", opts.Namespace)
	}
	over := env(map[string]string{durable.NamespaceEnv: "Tenant 7"})
	opts := WithProject(OptionsFromEnvTo(over, &warn), file, over, &warn)
	if opts.Namespace != "Tenant 7" || warn.Len() != 0 {
		t.Errorf("environment over sky.toml: namespace %q, warnings %q; want \"Tenant 7\", none", opts.Namespace, warn.String())
	}
	if err := durable.CheckNamespace(opts.Namespace); err == nil || !strings.Contains(err.Error(), `"Tenant 7"`) {
		t.Errorf("CheckNamespace(%q) = %v, want an error naming it", opts.Namespace, err)
	}
}
