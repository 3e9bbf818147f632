package db

import (
	"context"

	"github.com/jackc/pgx/v5"

	"skydurable/runtime/task"
)

// Listener is a PostgreSQL session of its own LISTENing on one channel
// (NOTIFY is per session, so it is not a pooled connection: Listen takes
// one out of the pool for good and Close closes it).
type Listener struct {
	conn *pgx.Conn
}

// CanListen reports whether Listen works on d: PostgreSQL, not through a
// transaction pooler.
func (d *DB) CanListen() bool {
	be, ok := d.p.be.(*postgresBackend)
	return ok && !be.pooled
}

// Listen opens a Listener on channel. On SQLite, which has no NOTIFY, and
// through a transaction pooler, which gives the session to other clients
// after each statement, it is an InvalidInput error.
func (d *DB) Listen(ctx context.Context, channel string) (*Listener, error) {
	be, ok := d.p.be.(*postgresBackend)
	if !ok {
		return nil, task.Errorf(task.InvalidInput, "%s: LISTEN %q needs PostgreSQL", d.p.dialect, channel)
	}
	if be.pooled {
		return nil, task.Errorf(task.InvalidInput, "postgres: LISTEN %q cannot go through a transaction pooler (%s=transaction): the pooler hands the session to other clients after each statement; hint: listen on a direct URL of the database (SKY_DURABLE_LISTEN_URL)", channel, EnvPooler)
	}
	c, err := be.pool.Acquire(ctx)
	if err != nil {
		return nil, mapError(d.p.dialect, "LISTEN", err)
	}
	l := &Listener{conn: c.Hijack()}
	if _, err := l.conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		l.Close()
		return nil, mapError(d.p.dialect, "LISTEN", err)
	}
	return l, nil
}

// Wait blocks until a notification arrives on the channel, or ctx ends,
// and returns its payload.
func (l *Listener) Wait(ctx context.Context) (string, error) {
	n, err := l.conn.WaitForNotification(ctx)
	if err != nil {
		return "", err
	}
	return n.Payload, nil
}

// Close ends the session.
func (l *Listener) Close() { _ = l.conn.Close(context.Background()) }
