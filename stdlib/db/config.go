package db

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	sqldb "skydurable/runtime/db"
	"skydurable/runtime/project"
	"skydurable/runtime/task"
)

// Config names one database: a driver and its path or URL, and for
// PostgreSQL what pooler stands in between (SKY_DB_POOLER).
type Config struct {
	Driver string
	DSN    string
	Pooler sqldb.Pooler
}

// DefaultSQLitePath is where Db.connect keeps its SQLite file when nothing
// else is configured (relative to the working directory).
const DefaultSQLitePath = ".skydata/app.db"

// Env is what Db.connect reads: environment variables and sky.toml.
type Env struct {
	// Getenv reads an environment variable ("" when unset).
	Getenv func(string) string
	// Dir is the project root: the directory whose sky.toml is read, and
	// that a relative SQLite path in it is relative to ("" is the working
	// directory).
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
// SKY_DB_POOLER (transaction, session or none; unset: transaction when the
// URL's port is 6432, PgBouncer's) says whether a transaction pooler stands
// between the pool and PostgreSQL.
//
// Without a driver it is "sqlite"; a SQLite database without a path is
// DefaultSQLitePath; a PostgreSQL one without a URL is an InvalidInput error.
// Changing the driver (SKY_DB_DRIVER) drops a path set for the other one.
func Resolve(env Env) (Config, error) {
	var cfg Config
	file, err := project.Load(env.Dir)
	if err != nil {
		kind := task.InvalidInput
		if errors.Is(err, fs.ErrPermission) {
			kind = task.Io
		}
		return Config{}, task.Errorf(kind, "Db.connect: %w", err)
	}
	cfg.Driver, cfg.DSN = file.DatabaseDriver, file.DatabasePath
	if cfg.DSN != "" && normalDriver(cfg.Driver) != "postgres" && !filepath.IsAbs(cfg.DSN) && !strings.Contains(cfg.DSN, "://") {
		// A SQLite path in sky.toml is relative to the project root.
		cfg.DSN = filepath.Join(env.Dir, cfg.DSN)
	}
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
	if cfg.Pooler, err = sqldb.ParsePooler(env.Getenv(sqldb.EnvPooler)); err != nil {
		return Config{}, err
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
