// Package project reads sky.toml, the optional project file of a Sky program.
// It is the one TOML reader of the project: the CLI takes the program's layout
// from it and Db.connect its [database] table.
//
// It may import the TOML decoder and the standard library.
package project

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// FileName is the project file sky reads from a project's directory.
const FileName = "sky.toml"

// File is what sky.toml says. Every field is optional, and keys it does not
// name are ignored, since other tools may share the file.
type File struct {
	Name           string // name
	Entry          string // entry: the program file `sky run` uses by default
	SourceRoot     string // [source] root: where module A.B is found (A/B.sky)
	DatabaseDriver string // [database] driver
	DatabasePath   string // [database] path: a SQLite file or a PostgreSQL URL
	// [durable] retention: finished runs older than this are compacted by
	// the workers ("30d", "720h"); [durable] orphan_signal_ttl: how long a
	// signal to an unknown run id is kept. Read by stdlib/durable.
	DurableRetention, DurableOrphanSignalTTL string
	// [durable] namespace: the namespace the programs and workers of the
	// project work in (SKY_DURABLE_NAMESPACE overrides it). Read by
	// stdlib/durable.
	DurableNamespace string
}

// Error is a sky.toml that cannot be used: where (Line and Col are 1-based,
// 0 when the problem has no one place; Len is the length of the offending
// text), what is wrong and a hint. The CLI shows it with the source line.
type Error struct {
	Path          string
	Line, Col     int
	Len           int
	Message, Hint string
}

// Error is "path:line:col: message; hint: hint" (without the position when
// there is none).
func (e *Error) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.Path, e.Line, e.Col)
	}
	return loc + ": " + e.Message + "; hint: " + e.Hint
}

// Load reads the sky.toml in dir ("" is the working directory); a missing
// file is an empty File.
func Load(dir string) (File, error) {
	path := filepath.Join(dir, FileName)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, nil
	}
	if err != nil {
		return File{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return Parse(path, string(data))
}

// Parse reads the TOML text of the project file at path (named in errors).
// A syntax error says path:line:col and what is wrong; a key of the wrong
// type names the key and the value it holds.
func Parse(path, text string) (File, error) {
	var doc map[string]any
	_, err := toml.Decode(text, &doc)
	var perr toml.ParseError
	if errors.As(err, &perr) {
		msg := perr.Message
		if perr.LastKey != "" {
			msg = fmt.Sprintf("%s (at key %s)", msg, perr.LastKey)
		}
		return File{}, &Error{Path: path, Line: perr.Position.Line, Col: perr.Position.Col, Len: perr.Position.Len,
			Message: msg, Hint: "sky.toml is TOML, see https://toml.io"}
	}
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	var f File
	fields := []struct {
		key string
		dst *string
	}{
		{"name", &f.Name}, {"entry", &f.Entry}, {"source.root", &f.SourceRoot},
		{"database.driver", &f.DatabaseDriver}, {"database.path", &f.DatabasePath},
		{"durable.retention", &f.DurableRetention}, {"durable.orphan_signal_ttl", &f.DurableOrphanSignalTTL},
		{"durable.namespace", &f.DurableNamespace},
	}
	for _, fl := range fields {
		v, ok := lookup(doc, fl.key)
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return File{}, &Error{Path: path, Message: fmt.Sprintf("%s must be a string, found %s %v", fl.key, tomlKind(v), v),
				Hint: "write the value in double quotes"}
		}
		*fl.dst = s
	}
	return f, nil
}

// lookup finds a dotted key ("source.root") in a decoded document; a missing
// key, or a table on the way that is not a table, is not found.
func lookup(doc map[string]any, key string) (any, bool) {
	table := doc
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		next, ok := table[p].(map[string]any)
		if !ok {
			return nil, false
		}
		table = next
	}
	v, ok := table[parts[len(parts)-1]]
	return v, ok
}

// tomlKind names the TOML type of a decoded value, for errors.
func tomlKind(v any) string {
	switch v.(type) {
	case int64:
		return "the integer"
	case float64:
		return "the float"
	case bool:
		return "the boolean"
	case []any, []map[string]any:
		return "the array"
	case map[string]any:
		return "the table"
	}
	return "the date"
}
