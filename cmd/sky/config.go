package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
)

// config is what sky.toml says. Every field is optional.
type config struct {
	Name  string // name
	Entry string // entry: the program file `sky run` uses by default
	Root  string // [source] root: where module A.B is found (A/B.sky)
	// The [database] table is read by Db.connect and `sky durable`
	// (stdlib/db.Resolve), not here.
}

// configFile is the project file sky reads from the working directory.
const configFile = "sky.toml"

// loadConfig reads sky.toml in dir; a missing file is an empty config.
func loadConfig(dir string) (config, error) {
	path := configFile
	if dir != "" && dir != "." {
		path = dir + "/" + configFile
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return config{}, nil
	}
	if err != nil {
		return config{}, fmt.Errorf("reading %s: %w", path, err)
	}
	return parseConfig(path, string(data))
}

// parseConfig reads the TOML subset sky.toml uses: `[section]` headers and
// `key = "string"` (or a bare number/bool) lines, with `#` comments.
func parseConfig(path, text string) (config, error) {
	var cfg config
	fields := map[string]*string{
		"name": &cfg.Name, "entry": &cfg.Entry,
		"source.root": &cfg.Root,
	}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(stripComment(sc.Text()))
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			if !strings.HasSuffix(line, "]") {
				return cfg, fmt.Errorf("%s:%d: a section header must end with `]`: %s", path, n, line)
			}
			section = strings.TrimSpace(line[1 : len(line)-1])
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			return cfg, fmt.Errorf("%s:%d: expected `key = value`, found %q", path, n, line)
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if strings.HasPrefix(val, `"`) {
			s, err := strconv.Unquote(val)
			if err != nil {
				return cfg, fmt.Errorf("%s:%d: bad string %s for %s: %v", path, n, val, key, err)
			}
			val = s
		}
		full := key
		if section != "" {
			full = section + "." + key
		}
		if dst, ok := fields[full]; ok {
			*dst = val
		}
		// Unknown keys are ignored: other tools may share the file.
	}
	return cfg, sc.Err()
}

// stripComment drops a `#` comment that is not inside a string.
func stripComment(line string) string {
	inString := false
	for i, r := range line {
		switch {
		case r == '"' && (i == 0 || line[i-1] != '\\'):
			inString = !inString
		case r == '#' && !inString:
			return line[:i]
		}
	}
	return line
}
