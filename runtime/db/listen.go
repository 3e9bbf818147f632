package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"skydurable/runtime/task"
)

// Listener delivers a database's notifications to the subscribers of this
// process. On PostgreSQL it is one session of its own per database (per
// listening URL) that LISTENs on every channel some subscriber needs, for
// as many subscribers as there are: NOTIFY is per session, so it cannot be
// a pooled connection, and one session per waiter would exhaust the server.
// The session is opened by the first subscriber and closed when the last
// one leaves; a dropped session is reopened (at once, then backing off from
// 1s to 30s) and every subscriber is told (Notice.Missed) that it may have
// missed notifications, so it reads again what it waits for. On SQLite the
// Listener is in-process: Notify delivers to the subscribers of the same DB
// (other processes' writes are not heard).
type Listener struct {
	d *DB
	// cfg is the session's configuration (PostgreSQL); check says to
	// compare the database it reaches with d's (another URL than d's).
	cfg   *pgx.ConnConfig
	check bool
	where string

	mu   sync.Mutex
	subs map[topic]map[*subscription]struct{}
	// listened are the channels LISTENed on the live session (nil: none).
	listened map[string]bool
	running  bool
	// interrupt stops the session's wait for a notification, so it LISTENs
	// on a new channel or closes.
	interrupt func()
	stats     ListenStats
}

// ListenStats are a Listener's figures.
type ListenStats struct {
	// Sessions is how many sessions the Listener opened so far; Open is
	// whether one is open now.
	Sessions int
	Open     bool
	// Subscribers counts the current subscriptions.
	Subscribers int
}

// Notice is what a subscriber hears.
type Notice struct {
	// Payload is the notification's payload.
	Payload string
	// Missed says notifications may have been lost (the session was
	// reopened after Err): read again what you wait for.
	Missed bool
	// Err says the session failed; Missed follows once it is back.
	Err error
}

// topic is a channel and a payload ("" for every payload).
type topic struct{ channel, key string }

type subscription struct {
	topic
	fn func(Notice)
	// ready receives the outcome of the first LISTEN (nil when live);
	// live says the subscription was served by a session.
	ready chan error
	live  bool
}

// Notifies reports whether d's database can send notifications at all
// (LISTEN/NOTIFY: PostgreSQL), whether or not d's own connections can
// carry a LISTEN (CanListen: not through a transaction pooler).
func (d *DB) Notifies() bool {
	_, ok := d.p.be.(*postgresBackend)
	return ok
}

// CanListen reports whether d can deliver notifications from other
// sessions: PostgreSQL, not through a transaction pooler.
func (d *DB) CanListen() bool {
	be, ok := d.p.be.(*postgresBackend)
	return ok && !be.pooled
}

// Listener returns the Listener of d on url: "" (or d's own URL) for d's
// own connection settings, another URL (a direct one, when d goes through
// a transaction pooler) for a session there, checked at each connection
// to reach d's database. Every call with the same url returns the same
// Listener until d is closed. On PostgreSQL through a transaction pooler
// (url "") and with a URL that does not parse it is an InvalidInput error.
func (d *DB) Listener(url string) (*Listener, error) {
	be, ok := d.p.be.(*postgresBackend)
	if ok && url == be.dsn {
		url = ""
	}
	d.p.mu.Lock()
	defer d.p.mu.Unlock()
	if l := d.p.listeners[url]; l != nil {
		return l, nil
	}
	l := &Listener{d: &DB{p: d.p}, subs: map[topic]map[*subscription]struct{}{}}
	switch {
	case !ok:
	case url == "" && be.pooled:
		return nil, task.Errorf(task.InvalidInput, "postgres: LISTEN cannot go through a transaction pooler (%s=transaction): the pooler hands the session to other clients after each statement; hint: listen on a direct URL of the database (SKY_DURABLE_LISTEN_URL)", EnvPooler)
	case url == "":
		l.cfg = be.pool.Config().ConnConfig.Copy()
	default:
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			return nil, task.Errorf(task.InvalidInput, "postgres: cannot parse the listening URL: %v; hint: set SKY_DURABLE_LISTEN_URL to the PostgreSQL URL of the database", err)
		}
		SetDefaultConnectTimeout(&cfg.Config, url)
		l.cfg, l.check = cfg, true
	}
	if l.cfg != nil {
		name := "sky listener"
		if app := l.cfg.RuntimeParams["application_name"]; app != "" {
			name = app + " listener"
		}
		l.cfg.RuntimeParams["application_name"] = name
		delete(l.cfg.RuntimeParams, "statement_timeout")
		l.where = l.cfg.Host + ":" + strconv.Itoa(int(l.cfg.Port))
	}
	if d.p.listeners == nil {
		d.p.listeners = map[string]*Listener{}
	}
	d.p.listeners[url] = l
	return l, nil
}

// Stats reads l's figures.
func (l *Listener) Stats() ListenStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	for _, set := range l.subs {
		s.Subscribers += len(set)
	}
	return s
}

// Subscribe calls fn for each notification on channel whose payload is key
// (every payload when key is ""), and for the Notices of the session, until
// the returned stop is called. fn runs on the Listener's goroutine: it must
// not block (hand the notice on to a buffered channel, say). Subscribe
// returns once LISTEN on channel is in effect, so every notification
// committed after it returns is delivered: a waiter subscribes first and
// then reads what it waits for, and a change committed between the two is
// either seen by the read or heard. It fails when ctx ends first or when
// the session cannot be opened (the subscription is then dropped). A
// notice already on its way when stop is called may still reach fn.
func (l *Listener) Subscribe(ctx context.Context, channel, key string, fn func(Notice)) (stop func(), err error) {
	s := &subscription{topic: topic{channel, key}, fn: fn, ready: make(chan error, 1)}
	l.mu.Lock()
	if l.d.p.closed.Load() {
		l.mu.Unlock()
		return nil, task.Errorf(task.Unavailable, "%s: LISTEN %q on a closed database", l.d.p.dialect, channel)
	}
	set := l.subs[s.topic]
	if set == nil {
		set = map[*subscription]struct{}{}
		l.subs[s.topic] = set
	}
	set[s] = struct{}{}
	switch {
	case l.cfg == nil || l.listened[channel]: // SQLite, or LISTEN in effect
		s.live = true
		s.ready <- nil
	case !l.running:
		l.running = true
		go l.run()
	case l.interrupt != nil:
		l.interrupt()
	}
	l.mu.Unlock()
	stop = func() { l.unsubscribe(s) }
	select {
	case err := <-s.ready:
		if err != nil {
			stop()
			return nil, err
		}
		return stop, nil
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
}

func (l *Listener) unsubscribe(s *subscription) {
	l.mu.Lock()
	defer l.mu.Unlock()
	set := l.subs[s.topic]
	if _, ok := set[s]; !ok {
		return
	}
	delete(set, s)
	if len(set) == 0 {
		delete(l.subs, s.topic)
	}
	if len(l.subs) == 0 && l.interrupt != nil {
		l.interrupt()
	}
}

// Notify sends payload on channel to the subscribers of this process (on
// SQLite: PostgreSQL notifies with NOTIFY or pg_notify, in SQL, on commit).
func (l *Listener) Notify(channel, payload string) {
	l.deliver(channel, Notice{Payload: payload})
}

// deliver calls the subscribers of channel that want the notification n.
func (l *Listener) deliver(channel string, n Notice) {
	var fns []func(Notice)
	l.mu.Lock()
	for _, key := range []string{n.Payload, ""} {
		for s := range l.subs[topic{channel, key}] {
			if s.live {
				fns = append(fns, s.fn)
			}
		}
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
}

// errIdle ends a session that has no subscribers left.
var errIdle = errors.New("no subscribers")

// run holds a session while there are subscribers, opening another when
// one fails.
func (l *Listener) run() {
	life := l.d.p.life
	backoff := time.Duration(0)
	for {
		served, err := l.session(life)
		idle := errors.Is(err, errIdle)
		if !idle {
			l.failPending(err)
		}
		l.mu.Lock()
		if len(l.subs) == 0 || life.Err() != nil {
			l.running = false
			l.mu.Unlock()
			if life.Err() != nil { // the waiters' next read says why
				l.broadcast(Notice{Err: fmt.Errorf("listening on %s: the database is closed", l.where)})
			}
			return
		}
		l.mu.Unlock()
		if idle { // subscribers came back as it closed
			continue
		}
		if served {
			backoff = 0
		}
		again := "at once"
		if backoff > 0 {
			again = "in " + backoff.String()
		}
		l.broadcast(Notice{Err: fmt.Errorf("listening on %s failed (%v); trying again %s", l.where, err, again)})
		select {
		case <-life.Done():
		case <-time.After(backoff):
		}
		backoff = min(max(2*backoff, time.Second), 30*time.Second)
	}
}

// session opens a session, LISTENs and dispatches until an error or until
// no subscriber is left (errIdle); served says LISTEN took effect.
func (l *Listener) session(life context.Context) (served bool, err error) {
	conn, err := pgx.ConnectConfig(life, l.cfg)
	if err != nil {
		return false, err
	}
	defer func() {
		l.mu.Lock()
		l.listened, l.interrupt = nil, nil
		l.stats.Open = false
		l.mu.Unlock()
		conn.Close(context.WithoutCancel(life))
	}()
	if l.check {
		if err := l.sameDatabase(life, conn); err != nil {
			return false, err
		}
	}
	l.mu.Lock()
	l.stats.Sessions++
	l.stats.Open = true
	l.listened = map[string]bool{}
	l.mu.Unlock()
	for {
		// LISTEN on the channels wanted and not yet listened, then wake
		// the subscribers waiting for them, and tell those of an earlier
		// session that they may have missed notifications.
		l.mu.Lock()
		if len(l.subs) == 0 {
			l.mu.Unlock()
			return served, errIdle
		}
		var want []string
		for t := range l.subs {
			if !l.listened[t.channel] && !slices.Contains(want, t.channel) {
				want = append(want, t.channel)
			}
		}
		l.mu.Unlock()
		for _, ch := range want {
			if _, err := conn.Exec(life, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
				return served, err
			}
		}
		served = true
		wait, cancel := context.WithCancel(life)
		var missed []func(Notice)
		l.mu.Lock()
		for _, ch := range want {
			l.listened[ch] = true
		}
		for t, set := range l.subs {
			if !slices.Contains(want, t.channel) {
				continue
			}
			for s := range set {
				if !s.live {
					s.live = true
					s.ready <- nil
				} else {
					missed = append(missed, s.fn)
				}
			}
		}
		// A subscriber that came (or the last that left) while LISTEN ran
		// found no wait to interrupt: look again before waiting.
		again := len(l.subs) == 0
		for t := range l.subs {
			again = again || !l.listened[t.channel]
		}
		l.interrupt = cancel
		l.mu.Unlock()
		for _, fn := range missed {
			fn(Notice{Missed: true})
		}
		if again {
			cancel()
			continue
		}
		n, err := conn.WaitForNotification(wait)
		interrupted := wait.Err() != nil && life.Err() == nil
		cancel()
		if n != nil {
			l.deliver(n.Channel, Notice{Payload: n.Payload})
		}
		if err != nil && !interrupted {
			return served, err
		}
	}
}

// failPending ends the Subscribe calls still waiting for a session with
// err: Unavailable, or InvalidInput when the URL reaches another database.
func (l *Listener) failPending(err error) {
	kind := task.Unavailable
	if errors.Is(err, errMismatch) {
		kind = task.InvalidInput
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for t, set := range l.subs {
		for s := range set {
			if !s.live {
				delete(set, s)
				s.ready <- &task.Error{Kind: kind, Cause: err, Message: fmt.Sprintf("%s: LISTEN %q on %s: %v", l.d.p.dialect, t.channel, l.where, err)}
			}
		}
		if len(set) == 0 {
			delete(l.subs, t)
		}
	}
}

// broadcast tells every live subscriber n.
func (l *Listener) broadcast(n Notice) {
	var fns []func(Notice)
	l.mu.Lock()
	for _, set := range l.subs {
		for s := range set {
			if s.live {
				fns = append(fns, s.fn)
			}
		}
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn(n)
	}
}

// errMismatch marks a listening URL that reaches another database.
var errMismatch = errors.New("another database")

// sqlDatabaseIdentity names a database and its server instance.
const sqlDatabaseIdentity = `SELECT current_database() || ' on the server started ' || pg_postmaster_start_time()::text || ' port ' || current_setting('port')`

// sameDatabase checks that conn reaches d's database (read again at each
// session: it changes when the server restarts or fails over).
func (l *Listener) sameDatabase(ctx context.Context, conn *pgx.Conn) error {
	var want, got string
	if err := l.d.QueryRow(ctx, sqlDatabaseIdentity).Scan(&want); err != nil {
		return err
	}
	if err := conn.QueryRow(ctx, sqlDatabaseIdentity).Scan(&got); err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%w: the listening URL reaches %q, but the pool reaches %q, so notifications would never arrive; hint: set SKY_DURABLE_LISTEN_URL to a direct URL of the pool's database", errMismatch, got, want)
	}
	return nil
}
