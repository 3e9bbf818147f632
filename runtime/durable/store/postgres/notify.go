package postgres

import (
	"context"
	"strconv"
	"strings"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/durable/store"
)

// Notifications on PostgreSQL: triggers on _sky_durable_runs NOTIFY in the
// transaction that changes a run, so the notification is delivered when the
// change commits, and the process's one db.Listener session per database
// LISTENs for every watch.
//
// Wake-up hints (store.HintChannel): whenever a run is left unclaimed with a
// finite wake time — a start, a signal that wakes it, a retry, a suspension
// on a timer or on a signal that already arrived — the payload is the run
// id when the run is due now, or "<run id> <ms>" when it is due in ms
// milliseconds (by the database clock). Claims, lease renewals, completions
// and runs parked on a signal ('infinity') send nothing: the trigger's WHEN
// clause and the status test filter them out.
//
// Finished runs (store.DoneChannel): the payload is the id of a run whose
// status became one no claim takes (done, dead, cancelled, timed out).
//
// Each trigger is installed by its first watch (so a database whose
// processes never listen carries none), idempotently, serialised by an
// advisory lock.

// hintLock is the pg_advisory_xact_lock key that serialises installing
// the triggers.
const hintLock = 7_362_201_556

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
    PERFORM pg_notify('` + store.HintChannel + `', NEW.id);
  ELSE
    PERFORM pg_notify('` + store.HintChannel + `', NEW.id || ' ' || due_in_ms);
  END IF;
  RETURN NULL;
END $$;`

const pgHintTrigger = `
CREATE TRIGGER _sky_durable_hint AFTER INSERT OR UPDATE ON _sky_durable_runs
  FOR EACH ROW WHEN (NEW.claimed_at IS NULL)
  EXECUTE FUNCTION _sky_durable_hint();`

const pgDoneFunction = `
CREATE OR REPLACE FUNCTION _sky_durable_done_hint() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('` + store.DoneChannel + `', NEW.id);
  RETURN NULL;
END $$;`

const pgDoneTrigger = `
CREATE TRIGGER _sky_durable_done_hint AFTER UPDATE OF status ON _sky_durable_runs
  FOR EACH ROW WHEN (NEW.status IN (` + store.SQLUnclaimable + `) AND OLD.status NOT IN (` + store.SQLUnclaimable + `))
  EXECUTE FUNCTION _sky_durable_done_hint();`

// pgHasTrigger counts the triggers of the runs table named $1.
const pgHasTrigger = `SELECT count(*) FROM pg_trigger WHERE tgname = ? AND tgrelid = to_regclass('_sky_durable_runs')`

const pgTriggerLock = `SELECT pg_advisory_xact_lock(?)`

// trigger is one notifying trigger: its name, its function (replaced when
// replace is set: an older version may be installed) and its CREATE.
type trigger struct {
	name, function, create string
	replace                bool
}

var (
	hintTrigger = trigger{"_sky_durable_hint", pgHintFunction, pgHintTrigger, true}
	doneTrigger = trigger{"_sky_durable_done_hint", pgDoneFunction, pgDoneTrigger, false}
)

// install creates t once: a check without the lock (the common case: it is
// there), then, under the lock, again before creating it.
func (s *Store) install(ctx context.Context, t trigger) error {
	there := func(ctx context.Context, q *db.DB) (bool, error) {
		var n int64
		s.hook("notify", pgHasTrigger)
		err := q.QueryRow(ctx, pgHasTrigger, t.name).Scan(&n)
		return n > 0, err
	}
	if !t.replace {
		if ok, err := there(ctx, s.d); err != nil || ok {
			return err
		}
	}
	return s.d.WithTransaction(ctx, func(ctx context.Context, tx *db.DB) error {
		if _, err := s.exec(ctx, tx, "notify", pgTriggerLock, int64(hintLock)); err != nil {
			return err
		}
		if t.replace {
			if _, err := tx.ExecRaw(ctx, t.function); err != nil {
				return err
			}
		}
		if ok, err := there(ctx, tx); err != nil || ok {
			return err
		}
		if !t.replace {
			if _, err := tx.ExecRaw(ctx, t.function); err != nil {
				return err
			}
		}
		_, err := tx.ExecRaw(ctx, t.create)
		return err
	})
}

// WatchDone installs the done trigger (once per Store) and watches
// store.DoneChannel for runID on the Listener of the pool's own database;
// through a transaction pooler it is store.ErrNoNotifications.
func (s *Store) WatchDone(ctx context.Context, runID string, fn func(store.Notice)) (store.Watch, error) {
	if !s.d.CanListen() {
		return store.Watch{}, store.ErrNoNotifications
	}
	if !s.doneInstalled.Load() {
		if err := s.install(ctx, doneTrigger); err != nil {
			return store.Watch{}, err
		}
		s.doneInstalled.Store(true)
	}
	return watch(ctx, s.d, "", store.DoneChannel, runID, fn)
}

// watch subscribes fn to channel (payloads equal to key, or all when key
// is "") on the Listener of url, parsing hints.
func watch(ctx context.Context, d *db.DB, url, channel, key string, fn func(store.Notice)) (store.Watch, error) {
	l, err := d.Listener(url)
	if err != nil {
		return store.Watch{}, err
	}
	stop, err := l.Subscribe(ctx, channel, key, func(n db.Notice) {
		id, due := n.Payload, time.Duration(0)
		if channel == store.HintChannel {
			id, due = parseHint(n.Payload)
		}
		fn(store.Notice{RunID: id, DueIn: due, Missed: n.Missed, Err: n.Err})
	})
	return store.Watch{Stop: stop}, err
}

// WatchHints migrates the schema, installs (or updates) the hint trigger
// and watches store.HintChannel on the Listener of url ("": the pool's own
// database, which must not go through a transaction pooler; another URL is
// checked to reach the same database at each connection).
func (s *Store) WatchHints(ctx context.Context, url string, fn func(store.Notice)) (store.Watch, error) {
	if url == "" && !s.d.CanListen() {
		return store.Watch{}, store.ErrNoNotifications
	}
	if err := s.Setup(ctx); err != nil {
		return store.Watch{}, err
	}
	if err := s.install(ctx, hintTrigger); err != nil {
		return store.Watch{}, err
	}
	return watch(ctx, s.d, url, store.HintChannel, "", fn)
}

// parseHint reads "<run id>" (due now) or "<run id> <ms>" (due in ms).
func parseHint(payload string) (runID string, dueIn time.Duration) {
	i := strings.LastIndexByte(payload, ' ')
	if i < 0 {
		return payload, 0
	}
	ms, err := strconv.ParseInt(payload[i+1:], 10, 64)
	if err != nil {
		return payload, 0
	}
	return payload[:i], time.Duration(ms) * time.Millisecond
}
