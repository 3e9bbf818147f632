package durable

import (
	"context"
	"sync"
	"sync/atomic"

	"skydurable/runtime/codec"
	"skydurable/runtime/db"
	"skydurable/runtime/task"
)

// SnapshotStore keeps named JSON snapshots (a TEA model, say) in the
// _sky_durable_snapshot table of one database, creating the durable tables
// on first use. Writes are write-if-newer by a sequence number, so a slow
// writer never replaces a newer snapshot. It is safe for concurrent use.
type SnapshotStore struct {
	e *Engine

	mu    sync.Mutex
	ready bool

	// tickets numbers the saves made in this process in the order they were
	// asked for (Ticket); order guards newest, the newest ticket written per
	// id, so an older save that runs late never lands over a newer one
	// (SaveSnapshotAutoInOrder).
	tickets atomic.Int64
	order   sync.Mutex
	newest  map[string]int64
}

// NewSnapshotStore keeps snapshots in e's database.
func NewSnapshotStore(e *Engine) *SnapshotStore {
	return &SnapshotStore{e: e, newest: map[string]int64{}}
}

// Ticket numbers a save at the moment it is asked for, before it runs: an
// App's update asks for its saves in order (Durable.snapshotCmd), while the
// commands that run them race.
func (s *SnapshotStore) Ticket() int64 { return s.tickets.Add(1) }

// setup runs the engine's idempotent Setup once (again after a failure).
func (s *SnapshotStore) setup(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready {
		return nil
	}
	if err := s.e.Setup(ctx); err != nil {
		return err
	}
	s.ready = true
	return nil
}

// checkSnapshotID refuses a snapshot id as checkName refuses every other
// name the engine stores, so both stores take the same ids.
func checkSnapshotID(id string) error {
	if id == "" {
		return task.New(task.InvalidInput, "durable: a snapshot id must not be empty; hint: name it after the app, e.g. \"counter\"")
	}
	return checkName("the snapshot id", id, nil, "name it after the app, e.g. \"counter\"")
}

// Save stores data (JSON) under id when seq is greater than the stored
// sequence; wrote is false when a newer (or equal) snapshot is kept. A
// sequence below 1 is an InvalidInput error naming it: no save could ever
// be newer than "nothing stored", so it is a caller's mistake, not a no-op.
func (s *SnapshotStore) Save(ctx context.Context, id string, seq int64, data string) (wrote bool, err error) {
	if err := checkSnapshotID(id); err != nil {
		return false, err
	}
	if seq < 1 {
		return false, task.Errorf(task.InvalidInput, "durable: snapshot %q: the sequence number %d is not 1 or more; hint: number the saves 1, 2, 3, ..., or use Durable.saveSnapshotAuto to let the store number them", id, seq)
	}
	if err := s.setup(ctx); err != nil {
		return false, err
	}
	return s.e.SaveSnapshot(ctx, id, seq, data)
}

// SaveNext stores data under id with the stored sequence plus one, so it
// replaces the current snapshot (last writer wins); it returns the sequence
// written. Two concurrent SaveNext calls both land, in some order. When
// keep is not nil it sees the stored snapshot first, and an error from it
// keeps that snapshot and is returned.
func (s *SnapshotStore) SaveNext(ctx context.Context, id string, data string, keep func(stored string) error) (int64, error) {
	for attempt := 0; attempt < 20; attempt++ {
		seq, stored, found, err := s.Load(ctx, id)
		if err != nil {
			return 0, err
		}
		if found && keep != nil {
			if err := keep(stored); err != nil {
				return 0, err
			}
		}
		wrote, err := s.Save(ctx, id, seq+1, data)
		if err != nil || wrote {
			return seq + 1, err
		}
	}
	return 0, task.Errorf(task.Conflict, "durable: snapshot %q kept changing under 20 attempts to save it; hint: give each writer its own snapshot id", id)
}

// Load reads the snapshot stored under id; found is false when there is
// none.
func (s *SnapshotStore) Load(ctx context.Context, id string) (seq int64, data string, found bool, err error) {
	if err := checkSnapshotID(id); err != nil {
		return 0, "", false, err
	}
	if err := s.setup(ctx); err != nil {
		return 0, "", false, err
	}
	return s.e.LoadSnapshot(ctx, id)
}

// SaveSnapshotAuto encodes a with cd and stores it under id with the
// stored sequence plus one, replacing the current snapshot (Sky's
// Durable.saveSnapshotAuto and Durable.snapshotCmd) — unless the stored
// snapshot no longer decodes with cd: that one is never overwritten, and
// the result is a Decode error naming the id.
func SaveSnapshotAuto[A any](ctx context.Context, s *SnapshotStore, id string, cd codec.Codec[A], a A) error {
	js, err := encodeSnapshot(id, cd, a)
	if err != nil {
		return err
	}
	_, err = s.SaveNext(ctx, id, js, func(stored string) error {
		if _, err := cd.Decode(stored); err != nil {
			return task.Errorf(task.Decode, "durable: snapshot %q does not decode with this codec, so it is kept, not overwritten: %s; hint: read it with the codec that saved it, or save with an explicit newer sequence (Durable.saveSnapshot) to replace it", id, errText(err))
		}
		return nil
	})
	return err
}

// SaveSnapshotAutoInOrder is SaveSnapshotAuto for a save numbered by
// Ticket: when this process already wrote a save of id with a later ticket,
// it writes nothing and succeeds, since a newer model is stored. So the
// snapshot of a burst of Durable.snapshotCmd commands, which run
// concurrently, is the model of the last update, not of the last command
// to finish. Saves from other processes still replace in arrival order.
func SaveSnapshotAutoInOrder[A any](ctx context.Context, s *SnapshotStore, id string, ticket int64, cd codec.Codec[A], a A) error {
	s.order.Lock()
	defer s.order.Unlock()
	if s.newest[id] > ticket {
		return nil
	}
	if err := SaveSnapshotAuto(ctx, s, id, cd, a); err != nil {
		return err
	}
	s.newest[id] = ticket
	return nil
}

// encodeSnapshot is a's JSON, or an InvalidInput error naming the snapshot.
func encodeSnapshot[A any](id string, cd codec.Codec[A], a A) (string, error) {
	js, err := cd.Encode(a)
	if err != nil {
		return "", task.Errorf(task.InvalidInput, "durable: snapshot %q does not encode: %s", id, errText(err))
	}
	return js, nil
}

// SaveSnapshot encodes a with cd and stores it under id with sequence seq
// when seq is newer than the stored one (Sky's Durable.saveSnapshot and
// Durable.saveSnapshotIfNewer); wrote is false when a newer or equal
// snapshot is kept.
func SaveSnapshot[A any](ctx context.Context, s *SnapshotStore, id string, seq int64, cd codec.Codec[A], a A) (wrote bool, err error) {
	js, err := encodeSnapshot(id, cd, a)
	if err != nil {
		return false, err
	}
	return s.Save(ctx, id, seq, js)
}

// LoadSnapshot reads the snapshot under id and decodes it with cd (Sky's
// Durable.loadSnapshot). A snapshot that does not decode is a Decode error
// naming the id and the bad JSON path; the stored text is left as it is.
func LoadSnapshot[A any](ctx context.Context, s *SnapshotStore, id string, cd codec.Codec[A]) (a A, found bool, err error) {
	_, data, found, err := s.Load(ctx, id)
	if err != nil || !found {
		return a, false, err
	}
	a, err = cd.Decode(data)
	if err != nil {
		return a, false, task.Errorf(task.Decode, "durable: snapshot %q does not decode: %s; hint: the model's codec changed since it was saved", id, errText(err))
	}
	return a, true, nil
}

// SnapshotStores hands out one SnapshotStore per database (so the tables
// are set up once per process and database).
type SnapshotStores struct {
	mu     sync.Mutex
	stores map[*db.DB]*SnapshotStore
}

// NewSnapshotStores makes an empty set.
func NewSnapshotStores() *SnapshotStores {
	return &SnapshotStores{stores: map[*db.DB]*SnapshotStore{}}
}

// For returns the store of d, making it on first use.
func (ss *SnapshotStores) For(d *db.DB) *SnapshotStore {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.stores[d]
	if !ok {
		s = NewSnapshotStore(New(d, Options{}))
		ss.stores[d] = s
	}
	return s
}
