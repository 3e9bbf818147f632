package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// maxChunk is the most a Chunk carries (real Sky's 64 KiB).
const maxChunk = 64 << 10

// ring holds the last size bytes of one output stream; total counts every
// byte the stream has carried, so a byte's number never changes.
type ring struct {
	size int

	mu      sync.Mutex
	buf     []byte
	total   int64
	eof     bool
	changed chan struct{} // closed and replaced on every write and at the end
	ended   chan struct{} // closed at the end
}

func newRing(size int) *ring {
	return &ring{size: size, changed: make(chan struct{}), ended: make(chan struct{})}
}

// fill copies the stream into the ring until it ends.
func (r *ring) fill(f *os.File) {
	defer f.Close()
	b := make([]byte, 32<<10)
	for {
		n, err := f.Read(b)
		r.mu.Lock()
		if n > 0 {
			r.buf = append(r.buf, b[:n]...)
			if len(r.buf) > r.size {
				r.buf = r.buf[len(r.buf)-r.size:]
			}
			r.total += int64(n)
		}
		if err != nil {
			r.eof = true
			close(r.ended)
		}
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// errPastEnd is a read from beyond the bytes a stream has carried.
var errPastEnd = errors.New("the offset is past the end of the stream")

// chunk is one read of a ring, a Chunk record's fields.
type chunk struct {
	data         string
	from, next   int64
	dropped, eof bool
}

func (c chunk) record() value.Value {
	return value.NewRecord(map[string]value.Value{"data": c.data, "from": c.from, "next": c.next, "dropped": c.dropped, "eof": c.eof})
}

// poll reads from offset on without waiting: ready when there is a byte or
// the stream has ended; otherwise changed is closed at the next write or
// the end.
func (r *ring) poll(offset int64) (c chunk, ready bool, changed <-chan struct{}, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	oldest := r.total - int64(len(r.buf))
	if offset < 0 {
		offset = oldest
	}
	if offset > r.total {
		return chunk{}, false, nil, fmt.Errorf("%w (%d bytes so far); hint: pass the next of the last chunk", errPastEnd, r.total)
	}
	if offset == r.total && !r.eof {
		return chunk{from: offset, next: offset}, false, r.changed, nil
	}
	from := max(offset, oldest)
	end := min(r.total, from+maxChunk)
	return chunk{data: string(r.buf[from-oldest : end-oldest]), from: from, next: end, dropped: from > offset, eof: r.eof && end == r.total}, true, nil, nil
}

// read gives the bytes from offset on, waiting until there is one, the
// stream ends, ctx ends, or timeout fires (an empty chunk).
func (r *ring) read(ctx context.Context, offset int64, timeout <-chan time.Time) (value.Value, error) {
	for {
		c, ready, changed, err := r.poll(offset)
		if err != nil {
			return nil, err
		}
		if ready {
			return c.record(), nil
		}
		select {
		case <-changed:
		case <-timeout:
			return c.record(), nil
		case <-ctx.Done():
			return nil, task.As(ctx.Err())
		}
	}
}
