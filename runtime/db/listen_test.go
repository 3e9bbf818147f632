package db_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"skydurable/runtime/db"
	"skydurable/runtime/db/dbtest"
	"skydurable/runtime/task"
)

// notices collects what a subscriber hears, on a channel (the subscriber's
// fn must not block: the buffer is large).
func notices() (chan db.Notice, func(db.Notice)) {
	ch := make(chan db.Notice, 1024)
	return ch, func(n db.Notice) { ch <- n }
}

// next waits for the next notice that matches ok.
func next(t *testing.T, ch chan db.Notice, what string, ok func(db.Notice) bool) db.Notice {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case n := <-ch:
			if ok(n) {
				return n
			}
		case <-timeout:
			t.Fatalf("no %s within 30s", what)
		}
	}
}

func payload(p string) func(db.Notice) bool {
	return func(n db.Notice) bool { return n.Err == nil && !n.Missed && n.Payload == p }
}

// TestListenerIsOneSessionForEverySubscriber: subscribers of several
// channels and payloads share one session, each hears only its own
// notifications, a notification sent right after Subscribe returns is
// delivered (Subscribe returns once LISTEN is in effect), and the session
// closes with the last subscriber.
func TestListenerIsOneSessionForEverySubscriber(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	l, err := d.Listener("")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := d.Listener(""); again != l {
		t.Fatal("a second DB.Listener(\"\") gave another Listener")
	}
	a, fa := notices()
	b, fb := notices()
	all, fall := notices()
	stopA, err := l.Subscribe(ctx, "chan_one", "a", fa)
	if err != nil {
		t.Fatal(err)
	}
	stopB, err := l.Subscribe(ctx, "chan_one", "b", fb)
	if err != nil {
		t.Fatal(err)
	}
	stopAll, err := l.Subscribe(ctx, "chan_two", "", fall)
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, d, `SELECT pg_notify('chan_one', 'b'), pg_notify('chan_one', 'a'), pg_notify('chan_two', 'x')`)
	next(t, a, "notice a", payload("a"))
	next(t, b, "notice b", payload("b"))
	next(t, all, "notice x", payload("x"))
	if len(a) != 0 || len(b) != 0 {
		t.Errorf("a subscriber heard another's payload: a %d more, b %d more", len(a), len(b))
	}
	if s := l.Stats(); s.Sessions != 1 || !s.Open || s.Subscribers != 3 {
		t.Errorf("stats %+v; want one open session and 3 subscribers", s)
	}
	var sessions int64
	if err := d.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'sky listener'`).Scan(&sessions); err != nil || sessions != 1 {
		t.Errorf("listener sessions in pg_stat_activity: %d (%v); want 1", sessions, err)
	}
	stopA()
	stopB()
	stopAll()
	stopA() // stopping twice is harmless
	waitFor(t, "the session to close", func() bool { return !l.Stats().Open })
	// A new subscriber opens a new session.
	c, fc := notices()
	stopC, err := l.Subscribe(ctx, "chan_one", "", fc)
	if err != nil {
		t.Fatal(err)
	}
	defer stopC()
	mustExec(t, d, `SELECT pg_notify('chan_one', 'c')`)
	next(t, c, "notice c", payload("c"))
	if s := l.Stats(); s.Sessions != 2 {
		t.Errorf("sessions %d; want 2 (one closed with its last subscriber, one reopened)", s.Sessions)
	}
}

// TestListenerReconnectsAndTellsEverySubscriber: a session terminated by
// the server (pg_terminate_backend) is reopened; every subscriber hears
// Err, then Missed once LISTEN is back, and notifications flow again.
func TestListenerReconnectsAndTellsEverySubscriber(t *testing.T) {
	ctx := context.Background()
	d := dbtest.Open(t, "postgres")
	l, err := d.Listener("")
	if err != nil {
		t.Fatal(err)
	}
	a, fa := notices()
	b, fb := notices()
	for _, s := range []struct {
		key string
		fn  func(db.Notice)
	}{{"a", fa}, {"b", fb}} {
		stop, err := l.Subscribe(ctx, "chan_kill", s.key, s.fn)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
	}
	var killed int64
	if err := d.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'sky listener') k`).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminated %d listener sessions (%v); want 1", killed, err)
	}
	for name, ch := range map[string]chan db.Notice{"a": a, "b": b} {
		n := next(t, ch, "the error of subscriber "+name, func(n db.Notice) bool { return n.Err != nil })
		if !strings.Contains(n.Err.Error(), "listening on") {
			t.Errorf("error %v; want it to say where it listened", n.Err)
		}
		next(t, ch, "Missed of subscriber "+name, func(n db.Notice) bool { return n.Missed })
	}
	mustExec(t, d, `SELECT pg_notify('chan_kill', 'a'), pg_notify('chan_kill', 'b')`)
	next(t, a, "notice a after the reconnect", payload("a"))
	next(t, b, "notice b after the reconnect", payload("b"))
	if s := l.Stats(); s.Sessions != 2 || s.Subscribers != 2 {
		t.Errorf("stats %+v; want 2 sessions (one killed, one reopened), 2 subscribers", s)
	}
}

// TestListenerChecksItsURL: a listening URL that reaches another database
// is refused (its notifications would never come), and so is listening
// through a transaction pooler.
func TestListenerChecksItsURL(t *testing.T) {
	d := dbtest.Open(t, "postgres")
	l, err := d.Listener(dbtest.URL(t, "other"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Subscribe(context.Background(), "chan", "", func(db.Notice) {})
	if err == nil || !strings.Contains(err.Error(), "notifications would never arrive") {
		t.Fatalf("Subscribe on another database: %v; want a mismatch", err)
	}
	if k := kindOf(t, err); k != task.InvalidInput {
		t.Errorf("a mismatch is %v; want InvalidInput (a setting to fix, not a failure to retry)", k)
	}
	if _, err := d.Listener("postgres://127.0.0.1:5432/x?pool_max_conns=zz&sslmode=bogus"); err == nil || !strings.Contains(err.Error(), "listening URL") {
		t.Errorf("a bad URL: %v; want an error naming the listening URL", err)
	}
}

// TestSQLiteListenerIsInProcess: on SQLite, Notify reaches the DB's
// subscribers of the channel and payload, with no session.
func TestSQLiteListenerIsInProcess(t *testing.T) {
	d := dbtest.Open(t, "sqlite")
	l, err := d.Listener("")
	if err != nil {
		t.Fatal(err)
	}
	a, fa := notices()
	stop, err := l.Subscribe(context.Background(), "chan", "a", fa)
	if err != nil {
		t.Fatal(err)
	}
	l.Notify("chan", "b")
	l.Notify("chan", "a")
	next(t, a, "notice a", payload("a"))
	if len(a) != 0 {
		t.Errorf("heard %d more notices; want none (b is another payload)", len(a))
	}
	stop()
	l.Notify("chan", "a")
	if len(a) != 0 || l.Stats().Subscribers != 0 || l.Stats().Sessions != 0 {
		t.Errorf("after stop: %d notices, stats %+v; want none", len(a), l.Stats())
	}
}

// waitFor polls cond until it holds (30s at most).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestListenerTellsSubscribersWhenTheDatabaseCloses: closing the DB ends
// the session and tells every subscriber (their next read fails with the
// reason); a later Subscribe is refused.
func TestListenerTellsSubscribersWhenTheDatabaseCloses(t *testing.T) {
	d := dbtest.Open(t, "postgres")
	l, err := d.Listener("")
	if err != nil {
		t.Fatal(err)
	}
	a, fa := notices()
	stop, err := l.Subscribe(context.Background(), "chan_close", "", fa)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	d.Close()
	n := next(t, a, "the error of the closed database", func(n db.Notice) bool { return n.Err != nil })
	if !strings.Contains(n.Err.Error(), "closed") {
		t.Errorf("error %v; want it to say the database is closed", n.Err)
	}
	if _, err := l.Subscribe(context.Background(), "chan_close", "", fa); err == nil || kindOf(t, err) != task.Unavailable {
		t.Errorf("Subscribe after Close: %v; want Unavailable", err)
	}
}
