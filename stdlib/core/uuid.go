package core

import (
	"context"
	"encoding/hex"
	"io"
	"strings"
	"sync"

	"skydurable/runtime/task"
	"skydurable/runtime/value"
)

// uuidKernels are Task constants: every run of the Task makes a new UUID.
func uuidKernels(env Env) []value.Kernel {
	gen := &uuidGen{env: env}
	return []value.Kernel{
		str1("Uuid_parse", "Uuid.parse", func(s string) value.Value {
			if id, ok := parseUUID(s); ok {
				return value.Just(id)
			}
			return value.Nothing
		}),
		{Name: "Uuid_v4", Arity: 0, Fn: func([]value.Value) (value.Value, error) {
			return value.Task{T: task.From(func(context.Context) (value.Value, error) { return gen.v4() })}, nil
		}},
		{Name: "Uuid_v7", Arity: 0, Fn: func([]value.Value) (value.Value, error) {
			return value.Task{T: task.From(func(context.Context) (value.Value, error) { return gen.v7() })}, nil
		}},
	}
}

// uuidGen makes RFC 9562 UUIDs. v7 ids are strictly increasing within one
// generator: in the same millisecond (or if the clock steps back) the 74
// random bits after the timestamp are the previous ones plus one.
type uuidGen struct {
	env Env

	mu     sync.Mutex
	lastMs int64
	last   [16]byte
}

func (g *uuidGen) random(b []byte) error {
	if _, err := io.ReadFull(g.env.Random, b); err != nil {
		return task.Errorf(task.Unavailable, "reading randomness for a UUID: %w", err)
	}
	return nil
}

func (g *uuidGen) v4() (value.Value, error) {
	var u [16]byte
	if err := g.random(u[:]); err != nil {
		return nil, err
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return formatUUID(u), nil
}

func (g *uuidGen) v7() (value.Value, error) {
	var u [16]byte
	if err := g.random(u[6:]); err != nil {
		return nil, err
	}
	ms := g.env.Now().UnixMilli()
	g.mu.Lock()
	if ms <= g.lastMs {
		ms = g.lastMs
		u = g.last
		incrementTail(&u)
	}
	for i := 0; i < 6; i++ {
		u[i] = byte(ms >> (40 - 8*i))
	}
	u[6] = u[6]&0x0f | 0x70
	u[8] = u[8]&0x3f | 0x80
	g.lastMs, g.last = ms, u
	g.mu.Unlock()
	return formatUUID(u), nil
}

// incrementTail adds one to the 74 bits after the timestamp (skipping the
// version and variant bits). The carry out of the top is dropped: 2^74 ids
// in one millisecond do not happen.
func incrementTail(u *[16]byte) {
	for i := 15; i >= 6; i-- {
		limit := byte(0xff)
		switch i {
		case 8:
			limit = 0x3f // below the variant bits
		case 6:
			limit = 0x0f // below the version nibble
		}
		if u[i]&limit != limit {
			u[i] = u[i]&^limit | (u[i]&limit + 1)
			return
		}
		u[i] &^= limit
	}
}

func formatUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], u[10:16])
	return string(b[:])
}

// parseUUID accepts the 8-4-4-4-12 hex form in either case and returns it
// in lower case.
func parseUUID(s string) (string, bool) {
	if len(s) != 36 {
		return "", false
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return "", false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return "", false
		}
	}
	return strings.ToLower(s), true
}
