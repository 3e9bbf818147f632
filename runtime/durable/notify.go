package durable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// Wake-up hints on PostgreSQL. Whenever a run is left unclaimed with a
// finite wake time — `start` inserts it, `signal` wakes a run waiting for
// that signal, `retry` re-queues it, a run suspends on a timer (sleep,
// backoff) or on a signal that already arrived — a trigger on
// _sky_durable_runs sends NOTIFY on HintChannel in the same transaction, so
// the hint is delivered when the change commits. Its payload is the run id
// when the run is due now, or "<run id> <ms>" when it is due in ms
// milliseconds (by the database clock). An idle worker LISTENing on a
// dedicated connection polls at once for the first kind, and when the time
// comes for the second (if it is within MaxHintDelay). The tick stays as
// the fallback, so a lost hint (a dropped connection, a pooler that does not
// pass NOTIFY, a worker started after the hint) only costs latency.
// SKY_DURABLE_NOTIFY=off turns listening (and installing the trigger) off.
//
// Installing the trigger is idempotent and serialised by an advisory lock;
// the listener installs it, so a database without workers that listen
// carries no trigger.

// HintChannel is the NOTIFY channel of wake-up hints.
const HintChannel = "sky_durable_wake"

// MaxHintDelay is the longest delay a listener keeps a timer for; a run due
// later is found by the workers' tick.
const MaxHintDelay = 24 * time.Hour

// pgHintLock is the pg_advisory_xact_lock key that serialises installing
// the hint trigger.
const pgHintLock = 7_362_201_556

// pgHintFunction sends the hint. Claims, lease renewals, completions and
// runs parked on a signal ('infinity') send nothing: the trigger's WHEN
// clause and the status test filter them out.
const pgHintFunction = `
CREATE OR REPLACE FUNCTION _sky_durable_hint() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  due_in_ms BIGINT;
BEGIN
  IF NEW.status NOT IN (` + store.SQLClaimable + `) OR NEW.wake_at = 'infinity' THEN
    RETURN NULL;
  END IF;
  due_in_ms := ceil(extract(epoch FROM NEW.wake_at - clock_timestamp()) * 1000);
  IF due_in_ms <= 0 THEN
    PERFORM pg_notify('` + HintChannel + `', NEW.id);
  ELSE
    PERFORM pg_notify('` + HintChannel + `', NEW.id || ' ' || due_in_ms);
  END IF;
  RETURN NULL;
END $$;`

// pgHintTrigger attaches the function to the runs table.
const pgHintTrigger = `
CREATE TRIGGER _sky_durable_hint AFTER INSERT OR UPDATE ON _sky_durable_runs
  FOR EACH ROW WHEN (NEW.claimed_at IS NULL)
  EXECUTE FUNCTION _sky_durable_hint();`

// InstallHints creates the hint trigger on the durable tables of d (on
// PostgreSQL; SQLite has no NOTIFY and is left alone). It runs Setup
// first, so it works on an empty database, and is safe when many processes
// call it at once.
func InstallHints(ctx context.Context, d *db.DB) error {
	if d.Dialect() != db.Postgres {
		return nil
	}
	if err := New(d, Options{}).Setup(ctx); err != nil {
		return err
	}
	return d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(?)`, int64(pgHintLock)); err != nil {
			return err
		}
		// The function is replaced every time (an older version may be
		// installed); the trigger is created once.
		if _, err := tx.ExecRaw(ctx, pgHintFunction); err != nil {
			return err
		}
		var n int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_trigger WHERE tgname = '_sky_durable_hint' AND tgrelid = to_regclass('_sky_durable_runs')`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
		_, err := tx.ExecRaw(ctx, pgHintTrigger)
		return err
	})
}

// HintSettings say whether and where a worker listens for hints.
type HintSettings struct {
	// Off turns listening off (SKY_DURABLE_NOTIFY=off, 0 or false).
	Off bool
	// URL is the PostgreSQL URL of the dedicated listening connection:
	// SKY_DURABLE_LISTEN_URL (or its older name SKY_DURABLE_NOTIFY_URL),
	// else the database's URL (DATABASE_URL, else SKY_DB_PATH when
	// SKY_DB_DRIVER is postgres) unless that goes through a transaction
	// pooler (SKY_DB_POOLER), which cannot carry LISTEN.
	URL string
	// NoURL says why URL is empty, for the worker's report.
	NoURL string
	// Report receives the listener's problems (nil: dropped).
	Report func(string)
}

// HintSettingsFromEnv reads HintSettings from the environment through
// getenv (os.Getenv in programs).
func HintSettingsFromEnv(getenv func(string) string) HintSettings {
	switch strings.ToLower(strings.TrimSpace(getenv("SKY_DURABLE_NOTIFY"))) {
	case "off", "0", "false", "no":
		return HintSettings{Off: true}
	}
	for _, name := range []string{"SKY_DURABLE_LISTEN_URL", "SKY_DURABLE_NOTIFY_URL"} {
		if url := getenv(name); url != "" {
			return HintSettings{URL: url}
		}
	}
	url := getenv("DATABASE_URL")
	if url == "" && strings.HasPrefix(strings.ToLower(getenv("SKY_DB_DRIVER")), "postgres") {
		url = getenv("SKY_DB_PATH")
	}
	if url == "" {
		return HintSettings{NoURL: "no PostgreSQL URL to listen on (set DATABASE_URL or SKY_DURABLE_LISTEN_URL, or SKY_DURABLE_NOTIFY=off)"}
	}
	if pooler, err := db.ParsePooler(getenv(db.EnvPooler)); err != nil || pooler.Resolve(url) == db.PoolerTransaction {
		return HintSettings{NoURL: "the database URL goes through a transaction pooler, which cannot carry LISTEN (set SKY_DURABLE_LISTEN_URL to a direct URL of the database, or SKY_DURABLE_NOTIFY=off)"}
	}
	return HintSettings{URL: url}
}

// ListenForHints holds a dedicated connection to url LISTENing on
// HintChannel and calls onHint(runID) for each hint, until ctx ends: at once
// for a run due now, and when it falls due for a run due later (within
// MaxHintDelay; the timers stop with ctx). Once
// LISTEN is in place (and again after each reconnect, with backoff up to
// 30s) it calls onHint(""): hints sent before that were missed, so the
// worker should poll. It
// installs the hint trigger on d first, and checks that url reaches the
// same database as d (a mismatch is an error: its hints would never come).
// report receives connection problems; it returns only when ctx ends or on
// a mismatch or a bad url.
func ListenForHints(ctx context.Context, d *db.DB, url string, onHint func(runID string), report func(string)) error {
	if err := InstallHints(ctx, d); err != nil {
		return err
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("durable hints: cannot parse the listening URL: %w; hint: set SKY_DURABLE_LISTEN_URL to the PostgreSQL URL of the database, or SKY_DURABLE_NOTIFY=off", err)
	}
	db.SetDefaultConnectTimeout(&cfg.Config, url)
	timers := &hintTimers{ctx: ctx, onHint: onHint, pending: map[*time.Timer]bool{}}
	defer timers.stop()
	backoff := time.Second
	for ctx.Err() == nil {
		// The polled database's identity is read again at each connection:
		// it changes when the server restarts or fails over.
		want, err := databaseIdentity(d.QueryRow(ctx, sqlDatabaseIdentity))
		var conn *pgx.Conn
		if err == nil {
			conn, err = pgx.ConnectConfig(ctx, cfg)
		}
		if err == nil {
			var listened bool
			listened, err = listen(ctx, conn, want, onHint, timers)
			conn.Close(context.WithoutCancel(ctx))
			if listened { // a connection that worked: the next one starts over
				backoff = time.Second
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		var mismatch *hintMismatch
		if errors.As(err, &mismatch) {
			return err
		}
		report(fmt.Sprintf("durable hints: listening on %s:%d failed (%v); polling on the tick only, retrying in %v", cfg.Host, cfg.Port, err, backoff))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
	return nil
}

// listen checks the database, LISTENs and forwards hints until an error;
// listened says whether LISTEN took effect.
func listen(ctx context.Context, conn *pgx.Conn, want string, onHint func(string), timers *hintTimers) (listened bool, err error) {
	got, err := databaseIdentity(conn.QueryRow(ctx, sqlDatabaseIdentity))
	if err != nil {
		return false, err
	}
	if got != want {
		return false, &hintMismatch{want: want, got: got}
	}
	if _, err := conn.Exec(ctx, "LISTEN "+HintChannel); err != nil {
		return false, err
	}
	// Hints sent before LISTEN took effect are lost: one catch-up hint
	// makes the worker poll for them.
	onHint("")
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		id, delay := parseHint(n.Payload)
		if delay <= 0 {
			onHint(id)
		} else if delay <= MaxHintDelay {
			timers.after(delay, id)
		}
	}
}

// parseHint reads "<run id>" (due now) or "<run id> <ms>" (due in ms).
func parseHint(payload string) (runID string, delay time.Duration) {
	i := strings.LastIndexByte(payload, ' ')
	if i < 0 {
		return payload, 0
	}
	ms, err := strconv.ParseInt(payload[i+1:], 10, 64)
	if err != nil {
		return payload, 0
	}
	// A few milliseconds past the due time, so the poll finds the run due
	// despite the timer's and the network's jitter.
	return payload[:i], time.Duration(ms)*time.Millisecond + hintMargin
}

// hintMargin is added to a delayed hint's wait.
const hintMargin = 5 * time.Millisecond

// hintTimers are the pending delayed hints of one listener.
type hintTimers struct {
	ctx    context.Context
	onHint func(string)

	mu      sync.Mutex
	pending map[*time.Timer]bool
}

// after calls onHint(runID) after d unless the listener has stopped.
func (h *hintTimers) after(d time.Duration, runID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		h.mu.Lock()
		delete(h.pending, t)
		h.mu.Unlock()
		if h.ctx.Err() == nil {
			h.onHint(runID)
		}
	})
	h.pending[t] = true
}

// stop cancels every pending delayed hint.
func (h *hintTimers) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for t := range h.pending {
		t.Stop()
	}
	clear(h.pending)
}

// sqlDatabaseIdentity names a database and its server instance.
const sqlDatabaseIdentity = `SELECT current_database() || ' on the server started ' || pg_postmaster_start_time()::text || ' port ' || current_setting('port')`

type scanner interface{ Scan(dest ...any) error }

func databaseIdentity(row scanner) (string, error) {
	var id string
	err := row.Scan(&id)
	return id, err
}

// hintMismatch says the listening URL reaches another database.
type hintMismatch struct{ want, got string }

func (m *hintMismatch) Error() string {
	return fmt.Sprintf("durable hints: the listening URL reaches %q, but the worker polls %q, so hints would never arrive; hint: set SKY_DURABLE_LISTEN_URL to the URL of the polled database, or SKY_DURABLE_NOTIFY=off", m.got, m.want)
}
