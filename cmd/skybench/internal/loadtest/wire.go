package loadtest

// A counting TCP proxy in front of PostgreSQL, for the load run: it reads
// the server's side of the wire protocol to count round trips (one
// ReadyForQuery per Sync or simple Query), transactions (ReadyForQuery
// returning to idle) and write commits (transactions in which an INSERT,
// UPDATE or DELETE changed at least one row). It counts what really crosses
// the wire, including BEGIN/COMMIT and pgx's own statements.
//
// A SELECT whose data-modifying CTE changed rows (the engine's claim: WITH
// ... claimed AS (UPDATE ...) SELECT ...) completes with the tag "SELECT n",
// so the proxy also reads the client's side: it remembers which prepared
// statements hold such a CTE, and counts one of them that returned rows as a
// write.
//
// It also counts the statements the client sent (one per Execute, one per
// simple Query other than the pool's liveness ping), to compare with what
// the engine announced to its OnStatement hook, and apart from them the
// plan settings sent with the engine's statements in their round trip
// (db.GenericPlanSetting), which the engine does not announce.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"skydurable/runtime/db"
)

// WireCounts is a snapshot of a proxy's counters.
type WireCounts struct {
	RoundTrips   int64
	Transactions int64
	WriteCommits int64
	Connections  int64
	// Statements is what the client sent: Executes and simple Queries
	// (BEGIN and COMMIT included), not the pool's "-- ping" and not
	// PlanSettings.
	Statements int64
	// PlanSettings are the Executes of db.GenericPlanSetting, each
	// pipelined before an engine statement (db.GenericPlan).
	PlanSettings int64
}

// sub is c - o, field by field.
func (c WireCounts) sub(o WireCounts) WireCounts {
	return WireCounts{c.RoundTrips - o.RoundTrips, c.Transactions - o.Transactions, c.WriteCommits - o.WriteCommits,
		c.Connections - o.Connections, c.Statements - o.Statements, c.PlanSettings - o.PlanSettings}
}

// pgProxy forwards connections to a PostgreSQL server and counts.
type pgProxy struct {
	ln     net.Listener
	target string
	rt     atomic.Int64
	tx     atomic.Int64
	wc     atomic.Int64
	conns  atomic.Int64
	stmts  atomic.Int64
	plans  atomic.Int64
	wg     sync.WaitGroup
	closed atomic.Bool
}

// startPGProxy listens on a free local port and returns the proxy and dsn
// rewritten to go through it; close stops it. dsn must be a postgres:// URL
// with sslmode=disable (the proxy does not speak TLS).
func startPGProxy(dsn string) (*pgProxy, string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return nil, "", fmt.Errorf("proxy: parse %q: %w", redact(dsn), err)
	}
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5432")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("proxy: listen: %w", err)
	}
	p := &pgProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	u.Host = ln.Addr().String()
	return p, u.String(), nil
}

func (p *pgProxy) close() {
	p.closed.Store(true)
	p.ln.Close()
}

// counts snapshots the counters.
func (p *pgProxy) counts() WireCounts {
	return WireCounts{p.rt.Load(), p.tx.Load(), p.wc.Load(), p.conns.Load(), p.stmts.Load(), p.plans.Load()}
}

func (p *pgProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

// serve relays one connection: client bytes unchanged; server messages
// parsed (type byte + int32 length) and counted.
func (p *pgProxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	p.conns.Add(1)
	ex := &executes{}
	go func() {
		relayClient(client, server, ex, &p.stmts, &p.plans)
		server.Close()
	}()
	r := bufio.NewReaderSize(server, 64<<10)
	w := bufio.NewWriterSize(client, 64<<10)
	var head [5]byte
	dirty := false
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[1:])) - 4
		if n < 0 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		switch head[0] {
		case 'C': // CommandComplete: "INSERT 0 1", "UPDATE 3", "DELETE 0", ...
			if changedRows(string(body), ex.pop()) {
				dirty = true
			}
		case 'I', 's': // EmptyQueryResponse, PortalSuspended: an Execute's end
			ex.pop()
		case 'Z': // ReadyForQuery: transaction status I (idle), T or E
			ex.reset()
			p.rt.Add(1)
			if len(body) == 1 && body[0] == 'I' {
				p.tx.Add(1)
				if dirty {
					p.wc.Add(1)
				}
				dirty = false
			}
		}
		if _, err := w.Write(head[:]); err != nil {
			return
		}
		if _, err := w.Write(body); err != nil {
			return
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}

// changedRows reports whether a CommandComplete tag is a write that changed
// at least one row; cteWrite says the statement was a SELECT over a
// data-modifying CTE, whose "SELECT n" with n > 0 is a write too.
func changedRows(tag string, cteWrite bool) bool {
	tag = strings.TrimRight(tag, "\x00")
	f := strings.Fields(tag)
	if len(f) < 2 {
		return false
	}
	switch f[0] {
	case "INSERT", "UPDATE", "DELETE", "MERGE":
	case "SELECT":
		if !cteWrite {
			return false
		}
	default:
		return false
	}
	n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
	return err == nil && n > 0
}

// writingCTE finds a data-modifying CTE: "name AS (UPDATE|INSERT|DELETE".
var writingCTE = regexp.MustCompile(`(?is)\bAS\s*\(\s*(UPDATE|INSERT|DELETE)\s`)

// executes is one connection's FIFO of Executes sent and not yet answered,
// each true when its statement holds a data-modifying CTE, with what the
// client prepared and bound.
type executes struct {
	mu      sync.Mutex
	stmts   map[string]prepared // by prepared statement name
	portals map[string]prepared
	queue   []bool
}

// prepared is what the proxy knows of a prepared statement: whether it
// writes in a CTE, whether it is the plan setting.
type prepared struct{ writes, setting bool }

func (e *executes) push(w bool) {
	e.mu.Lock()
	e.queue = append(e.queue, w)
	e.mu.Unlock()
}

func (e *executes) pop() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.queue) == 0 {
		return false
	}
	w := e.queue[0]
	e.queue = e.queue[1:]
	return w
}

// reset drops what an error made the server skip (it answers nothing more
// until the Sync's ReadyForQuery).
func (e *executes) reset() {
	e.mu.Lock()
	e.queue = e.queue[:0]
	e.mu.Unlock()
}

// pgxPing is the simple query pgx's pool sends to check a connection that
// was idle for a second or more before handing it out: not the engine's.
const pgxPing = "-- ping"

// cstrings splits a message body into its leading NUL-terminated strings.
func cstrings(body []byte, n int) []string {
	var out []string
	for len(out) < n {
		i := strings.IndexByte(string(body), 0)
		if i < 0 {
			break
		}
		out = append(out, string(body[:i]))
		body = body[i+1:]
	}
	return out
}

// relayClient copies the client's messages to the server, noting Parse,
// Bind and Execute in ex before forwarding each (so an Execute is queued
// before its answer can arrive), and counting statements in stmts and
// plan settings in plans. The first message (the startup packet) has no
// type byte.
func relayClient(client, server net.Conn, ex *executes, stmts, plans *atomic.Int64) {
	ex.stmts, ex.portals = map[string]prepared{}, map[string]prepared{}
	r := bufio.NewReaderSize(client, 64<<10)
	w := bufio.NewWriterSize(server, 64<<10)
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return
	}
	startup := make([]byte, int(binary.BigEndian.Uint32(size[:]))-4)
	if _, err := io.ReadFull(r, startup); err != nil {
		return
	}
	if _, err := w.Write(append(size[:], startup...)); err != nil || w.Flush() != nil {
		return
	}
	var head [5]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint32(head[1:])) - 4
		if n < 0 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		switch head[0] {
		case 'P': // Parse: statement name, query
			if f := cstrings(body, 2); len(f) == 2 {
				ex.mu.Lock()
				ex.stmts[f[0]] = prepared{writes: writingCTE.MatchString(f[1]), setting: f[1] == db.GenericPlanSetting}
				ex.mu.Unlock()
			}
		case 'B': // Bind: portal name, statement name
			if f := cstrings(body, 2); len(f) == 2 {
				ex.mu.Lock()
				ex.portals[f[0]] = ex.stmts[f[1]]
				ex.mu.Unlock()
			}
		case 'E': // Execute: portal name
			var st prepared
			if f := cstrings(body, 1); len(f) == 1 {
				ex.mu.Lock()
				st = ex.portals[f[0]]
				ex.mu.Unlock()
				ex.push(st.writes)
			}
			if st.setting {
				plans.Add(1)
			} else {
				stmts.Add(1)
			}
		case 'Q': // simple Query: the SQL
			if f := cstrings(body, 1); len(f) == 1 && f[0] != pgxPing {
				stmts.Add(1)
			}
		}
		if _, err := w.Write(head[:]); err != nil {
			return
		}
		if _, err := w.Write(body); err != nil {
			return
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return
			}
		}
	}
}
