package db

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"skydurable/runtime/task"
)

// Config names one database: a driver and its path or URL.
type Config struct {
	Driver string
	DSN    string
}

// DefaultSQLitePath is where Db.connect keeps its SQLite file when nothing
// else is configured (relative to the working directory).
const DefaultSQLitePath = ".skydata/app.db"

// Env is what Db.connect reads: environment variables and sky.toml.
type Env struct {
	// Getenv reads an environment variable ("" when unset).
	Getenv func(string) string
	// Dir is the directory whose sky.toml is read ("" is the working directory).
	Dir string
}

// DefaultEnv reads the process environment and ./sky.toml.
func DefaultEnv() Env { return Env{Getenv: os.Getenv} }

// Resolve picks the database Db.connect opens. Later sources override
// earlier ones:
//
//  1. `[database] driver` and `path` in sky.toml (in env.Dir);
//  2. DATABASE_URL: PostgreSQL at that URL;
//  3. SKY_DB_DRIVER, then SKY_DB_PATH (the file or URL for that driver).
//
// Without a driver it is "sqlite"; a SQLite database without a path is
// DefaultSQLitePath; a PostgreSQL one without a URL is an InvalidInput error.
// Changing the driver (SKY_DB_DRIVER) drops a path set for the other one.
func Resolve(env Env) (Config, error) {
	var cfg Config
	toml, err := readDatabaseSection(filepath.Join(env.Dir, "sky.toml"))
	if err != nil {
		return Config{}, err
	}
	cfg.Driver, cfg.DSN = toml["driver"], toml["path"]
	if url := env.Getenv("DATABASE_URL"); url != "" {
		cfg = Config{Driver: "postgres", DSN: url}
	}
	if d := env.Getenv("SKY_DB_DRIVER"); d != "" {
		if normalDriver(d) != normalDriver(cfg.Driver) {
			cfg.DSN = ""
		}
		cfg.Driver = d
	}
	if p := env.Getenv("SKY_DB_PATH"); p != "" {
		cfg.DSN = p
	}
	if cfg.Driver == "" {
		cfg.Driver = "sqlite"
	}
	cfg.Driver = normalDriver(cfg.Driver)
	if cfg.DSN == "" {
		switch cfg.Driver {
		case "sqlite":
			cfg.DSN = filepath.Join(env.Dir, DefaultSQLitePath)
		case "postgres":
			if url := env.Getenv("DATABASE_URL"); url != "" {
				cfg.DSN = url
			} else {
				return Config{}, task.New(task.InvalidInput,
					"Db.connect: the driver is postgres but no URL is set; hint: set DATABASE_URL, SKY_DB_PATH or `path` under [database] in sky.toml")
			}
		}
	}
	return cfg, nil
}

func normalDriver(d string) string {
	switch strings.ToLower(strings.TrimSpace(d)) {
	case "postgres", "postgresql", "pg":
		return "postgres"
	case "sqlite", "sqlite3":
		return "sqlite"
	}
	return strings.TrimSpace(d)
}

// readDatabaseSection reads the `key = "value"` pairs of the [database]
// table of a sky.toml (a missing file is an empty table). Only the TOML the
// project file needs is understood: tables, comments, quoted or bare values.
func readDatabaseSection(path string) (map[string]string, error) {
	out := map[string]string{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, task.Errorf(task.Io, "Db.connect: reading %s: %w", path, err)
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(stripComment(sc.Text()))
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "[") && strings.HasSuffix(text, "]") {
			section = strings.TrimSpace(text[1 : len(text)-1])
			continue
		}
		key, val, ok := strings.Cut(text, "=")
		if !ok {
			return nil, task.Errorf(task.InvalidInput, "%s:%d: expected `key = \"value\"`, found %q", path, line, text)
		}
		if section == "database" {
			out[strings.TrimSpace(key)] = unquote(strings.TrimSpace(val))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, task.Errorf(task.Io, "Db.connect: reading %s: %w", path, err)
	}
	return out, nil
}

// stripComment drops a `#` comment that is not inside a quoted string.
func stripComment(s string) string {
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0 && c == '\\' && quote == '"':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#':
			return s[:i]
		}
	}
	return s
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		inner := s[1 : len(s)-1]
		if s[0] == '"' {
			inner = strings.NewReplacer(`\\`, `\`, `\"`, `"`).Replace(inner)
		}
		return inner
	}
	return s
}
