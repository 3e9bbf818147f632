package project

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Project is a program's project: the folder whose sky.toml governs it, and
// what that file says.
type Project struct {
	// Root is the folder holding sky.toml, relative to the working
	// directory when it can be ("." when it is the working directory). A
	// program with no sky.toml above it has the working directory as root.
	Root string
	// Found says whether a sky.toml was found.
	Found bool
	// File is what sky.toml says, with Entry and SourceRoot made relative
	// to the working directory (they are written relative to Root).
	File File
}

// Find locates the project of the path start (a program file or a folder;
// "" is the working directory): the nearest folder holding sky.toml,
// walking up from start's folder to the file system root, as the go command
// finds go.mod. So `sky run app/src/Main.sky` run from app's parent reads
// app/sky.toml and keeps app's database.
func Find(start string) (Project, error) {
	wd, err := os.Getwd()
	if err != nil {
		return Project{}, err
	}
	dir := start
	if dir == "" {
		dir = "."
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = filepath.Dir(dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Project{}, err
	}
	for {
		_, err := os.Stat(filepath.Join(abs, FileName))
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return Project{}, err
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return Project{Root: "."}, nil
		}
		abs = parent
	}
	root := abs
	if rel, err := filepath.Rel(wd, abs); err == nil {
		root = rel
	}
	f, err := Load(root)
	if err != nil {
		return Project{}, err
	}
	for _, p := range []*string{&f.Entry, &f.SourceRoot} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(root, *p)
		}
	}
	return Project{Root: root, Found: true, File: f}, nil
}

// Entry is the program `sky run` and `sky check` use without a FILE: the
// file's entry, else src/Main.sky, under Root.
func (p Project) Entry() string {
	if p.File.Entry != "" {
		return p.File.Entry
	}
	return filepath.Join(p.Root, "src", "Main.sky")
}
