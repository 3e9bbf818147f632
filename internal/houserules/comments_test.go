package houserules

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCommentsNameWhatExists holds that no comment names a file or a Go
// declaration that does not exist (the comments that outlived the engine's
// split into stores did). It checks what it can resolve without guessing,
// so it has no false alarms (a name from outside the repository goes in
// backquotes):
//
//   - a word ending in .go, or a backquoted path with a slash ending in a
//     source extension (`assets/run.html`): a tracked file at that path from
//     the comment's directory or the module root, or ending in that path;
//   - pkg.Name, where pkg is a module package the file imports (or its own
//     package's name): Name is declared in that package, and in pkg.T.M, M
//     is a method or field of T;
//   - a backquoted `T.M` where T is a type of the file's own package: M is
//     a method or field of T;
//   - a word in lower camel case outside backquotes (firstWord): something
//     in the repository's Go, Sky, SQL, testscript or web sources spells it;
//   - a declaration's doc comment: it begins with the declaration's name,
//     not with an old name (a word in camel case or in another case).
func TestCommentsNameWhatExists(t *testing.T) {
	r := loadRepo(t)
	tracked := trackedFiles(t, r.root)
	decls := map[string]*packageDecls{} // by import path
	declsOf := func(importPath string) *packageDecls {
		if d, ok := decls[importPath]; ok {
			return d
		}
		d := readDecls(t, filepath.Join(r.root, rel(importPath)))
		decls[importPath] = d
		return d
	}
	known := spelledWords(t, r.root, tracked)
	named := map[string][]string{}
	for _, p := range r.packages {
		named[p.Name] = append(named[p.Name], p.ImportPath)
	}
	for _, p := range r.packages {
		for _, f := range slices.Concat(p.GoFiles, p.CgoFiles, p.TestGoFiles, p.XTestGoFiles) {
			file := filepath.Join(p.Dir, f)
			fset := token.NewFileSet()
			parsed, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			c := commentChecker{
				root: r.root, dir: p.Dir, tracked: tracked,
				own: declsOf(p.ImportPath), ownName: parsed.Name.Name, imports: map[string]string{},
				named: named, declsOf: declsOf,
			}
			if strings.HasSuffix(parsed.Name.Name, "_test") {
				c.ownName = strings.TrimSuffix(parsed.Name.Name, "_test")
			}
			for _, imp := range parsed.Imports {
				ip, _ := strconv.Unquote(imp.Path.Value)
				name := path.Base(ip)
				if imp.Name != nil {
					name = imp.Name.Name
				}
				if !inModule(ip) {
					ip = ""
				}
				c.imports[name] = ip
			}
			for _, group := range parsed.Comments {
				for _, cm := range group.List {
					problems := c.check(cm.Text)
					for _, w := range unknownCamelWords(cm.Text, known) {
						problems = append(problems, "names "+w+", which nothing in the repository declares or spells; hint: name what the code calls it now, or backquote a name from outside the repository")
					}
					for _, problem := range problems {
						t.Errorf("%s:%d: %s", rel(p.ImportPath)+"/"+f, fset.Position(cm.Pos()).Line, problem)
					}
				}
			}
			for _, dd := range documented(parsed) {
				if w := firstWord(dd.doc); w != dd.name && !strings.HasSuffix(w, "N") && (strings.EqualFold(w, dd.name) || camelWord.MatchString(w)) {
					t.Errorf("%s:%d: the doc comment of %s begins with %s; hint: a doc comment begins with the name it documents", rel(p.ImportPath)+"/"+f, fset.Position(dd.doc.Pos()).Line, dd.name, w)
				}
			}
		}
	}
}

var (
	goFileWord    = regexp.MustCompile(`(?:^|[\s(\x60"'\[,])([A-Za-z0-9_][A-Za-z0-9_./-]*\.go)\b`)
	backquoted    = regexp.MustCompile("`([^`\n]+)`")
	sourcePath    = regexp.MustCompile(`^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+\.(go|sky|sql|md|txtar|html|js|css|toml)$`)
	qualifiedName = regexp.MustCompile(`(?:^|[^\w./])((?:[a-z][\w-]*/)*)([a-z][a-z0-9]*)\.([A-Z]\w*)(?:\.([A-Za-z_]\w*))?`)
	typeMember    = regexp.MustCompile(`^([A-Za-z_]\w*)\.([A-Za-z_]\w*)(\(\))?$`)
)

// commentChecker resolves the names in the comments of one file.
type commentChecker struct {
	root, dir string
	tracked   []string
	own       *packageDecls
	ownName   string
	// imports maps each name the file imports to its import path, "" for a
	// package outside the module.
	imports map[string]string
	// named lists the module's packages by package name.
	named   map[string][]string
	declsOf func(importPath string) *packageDecls
}

// check returns what text names that does not exist.
func (c commentChecker) check(text string) []string {
	var problems []string
	for _, m := range goFileWord.FindAllStringSubmatch(text, -1) {
		if !c.fileExists(m[1]) {
			problems = append(problems, "names the file "+m[1]+", which does not exist")
		}
	}
	for _, m := range backquoted.FindAllStringSubmatch(text, -1) {
		span := m[1]
		if sourcePath.MatchString(span) && !strings.HasSuffix(span, ".go") && c.inModuleDir(span) && !c.fileExists(span) {
			problems = append(problems, "names the file "+span+", which does not exist")
		}
		if tm := typeMember.FindStringSubmatch(span); tm != nil && c.own.types[tm[1]] && !c.own.hasMember(tm[1], tm[2]) {
			problems = append(problems, "names "+tm[1]+"."+tm[2]+", but "+tm[1]+" has no method or field "+tm[2])
		}
	}
	for _, m := range qualifiedName.FindAllStringSubmatch(text, -1) {
		dir, pkg, name, member := m[1], m[2], m[3], m[4]
		var candidates []string // import paths pkg may mean
		imported, imports := c.imports[pkg]
		switch {
		case dir != "":
			if !c.isPackage(dir + pkg) {
				continue
			}
			candidates = []string{modulePath + "/" + dir + pkg}
		case imports && imported == "":
			continue // a package outside the module (encoding/json)
		case imports:
			candidates = []string{imported}
		case pkg == c.ownName:
			candidates = c.named[pkg] // its own, or another of that name (db.DB in stdlib/db)
		default:
			continue
		}
		if !c.declares(candidates, name, member) {
			problems = append(problems, "names "+dir+pkg+"."+name+strings.TrimSuffix("."+member, ".")+", which does not exist")
		}
	}
	return problems
}

// declares reports whether one of the packages declares name (and, when
// member is set and name is a type, whether that type has it).
func (c commentChecker) declares(importPaths []string, name, member string) bool {
	for _, ip := range importPaths {
		d := c.declsOf(ip)
		if d.names[name] && (member == "" || !d.types[name] || d.hasMember(name, member)) {
			return true
		}
	}
	return false
}

// isPackage reports whether dir (relative to the module root) is one of the
// module's packages.
func (c commentChecker) isPackage(dir string) bool {
	for _, ips := range c.named {
		for _, ip := range ips {
			if rel(ip) == dir {
				return true
			}
		}
	}
	return false
}

// inModuleDir reports whether p starts with a directory that exists, from
// the comment's directory or the module root: a path into this repository,
// not an example of a user's (`tests/UserTest.sky`).
func (c commentChecker) inModuleDir(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	for _, dir := range []string{c.dir, c.root} {
		if info, err := os.Stat(filepath.Join(dir, first)); err == nil && info.IsDir() {
			return true
		}
	}
	return false
}

// fileExists reports whether p names a tracked file: from the comment's
// directory, from the module root, or as the tail of a tracked path.
func (c commentChecker) fileExists(p string) bool {
	if strings.Contains(strings.SplitN(p, "/", 2)[0], ".") && strings.Contains(p, "/") {
		return true // a host name (github.com/…): another repository's file
	}
	for _, dir := range []string{c.dir, c.root} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			return true
		}
	}
	for _, f := range c.tracked {
		if f == p || strings.HasSuffix(f, "/"+p) {
			return true
		}
	}
	return false
}

// packageDecls are the names a package declares at top level, its types,
// and the methods and fields of each type (with the types it embeds).
type packageDecls struct {
	names   map[string]bool
	types   map[string]bool
	members map[string]map[string]bool
	embeds  map[string][]string
}

// hasMember reports whether type typ has a method or field m, itself or
// through a type it embeds; a type embedded from another package is taken
// to have it.
func (d *packageDecls) hasMember(typ, m string) bool {
	seen := map[string]bool{}
	var has func(string) bool
	has = func(typ string) bool {
		if seen[typ] {
			return false
		}
		seen[typ] = true
		if d.members[typ][m] {
			return true
		}
		for _, e := range d.embeds[typ] {
			if strings.Contains(e, ".") || !d.types[e] || has(e) {
				return true
			}
		}
		return false
	}
	return has(typ)
}

// readDecls parses every Go file of dir (tests too) for its declarations.
func readDecls(t *testing.T, dir string) *packageDecls {
	d := &packageDecls{names: map[string]bool{}, types: map[string]bool{}, members: map[string]map[string]bool{}, embeds: map[string][]string{}}
	member := func(typ, name string) {
		if d.members[typ] == nil {
			d.members[typ] = map[string]bool{}
		}
		d.members[typ][name] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.FuncDecl:
				if decl.Recv == nil {
					d.names[decl.Name.Name] = true
					continue
				}
				member(receiverType(decl.Recv.List[0].Type), decl.Name.Name)
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					switch spec := spec.(type) {
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							d.names[n.Name] = true
						}
					case *ast.TypeSpec:
						d.names[spec.Name.Name] = true
						d.types[spec.Name.Name] = true
						d.readType(spec.Name.Name, spec.Type, member)
					}
				}
			}
		}
	}
	return d
}

// readType records the fields, interface methods and embedded types of a
// type declaration.
func (d *packageDecls) readType(name string, typ ast.Expr, member func(typ, name string)) {
	var fields *ast.FieldList
	switch typ := typ.(type) {
	case *ast.StructType:
		fields = typ.Fields
	case *ast.InterfaceType:
		fields = typ.Methods
	default:
		return
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			d.embeds[name] = append(d.embeds[name], typeName(f.Type))
			continue
		}
		for _, n := range f.Names {
			member(name, n.Name)
		}
	}
}

// receiverType is the type name of a method receiver (*T, T[A], …).
func receiverType(e ast.Expr) string {
	return strings.TrimPrefix(typeName(e), "*")
}

// typeName renders a type expression's name: T, *T, pkg.T (type
// arguments dropped).
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.StarExpr:
		return "*" + typeName(e.X)
	case *ast.SelectorExpr:
		return typeName(e.X) + "." + e.Sel.Name
	case *ast.IndexExpr:
		return typeName(e.X)
	case *ast.IndexListExpr:
		return typeName(e.X)
	}
	return "?"
}

// trackedFiles lists the repository's files: tracked, or new and not
// ignored (outside a git work tree, every file under root).
func trackedFiles(t *testing.T, root string) []string {
	out, err := run(root, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err == nil {
		return strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	}
	var files []string
	_ = filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			r, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(r))
		}
		return nil
	})
	return files
}

// camelWord matches an identifier spelled in lower camel case (`claimRun`),
// which in prose can only be a Go or Sky name.
var camelWord = regexp.MustCompile(`^[a-z]+[A-Z][A-Za-z0-9]*$`)

// proseCamelWords are the camel-case words comments use as words.
var proseCamelWords = map[string]bool{"camelCase": true}

// unknownCamelWords returns the camel-case words of a comment that nothing
// in the repository declares or spells: the names of code that is gone. A
// backquoted span (Sky or Elm source), a pattern (crashEnv*, frameN for
// frame1…frame4) and a path are not names.
func unknownCamelWords(text string, known map[string]bool) []string {
	text = backquoted.ReplaceAllString(text, " ")
	var out []string
	for _, m := range proseWord.FindAllStringSubmatchIndex(text, -1) {
		w := text[m[2]:m[3]]
		if !camelWord.MatchString(w) || known[w] || proseCamelWords[w] || strings.HasSuffix(w, "N") ||
			strings.HasPrefix(text[m[3]:], "*") {
			continue
		}
		out = append(out, w)
	}
	return out
}

// proseWord matches a word of prose that is not part of a path, a host
// name, a selector or a shell variable.
var proseWord = regexp.MustCompile(`(?:^|[^\w.$/-])([A-Za-z_]\w*)`)

// spelledWords collects every identifier the repository's code spells: Go
// identifiers and the words of Go string literals, and the words of the Sky,
// SQL, testscript and web sources.
func spelledWords(t *testing.T, root string, tracked []string) map[string]bool {
	word := regexp.MustCompile(`[A-Za-z_]\w*`)
	known := map[string]bool{}
	for _, f := range tracked {
		ext := path.Ext(f)
		if !map[string]bool{".go": true, ".sky": true, ".sql": true, ".txtar": true, ".html": true, ".js": true, ".toml": true}[ext] {
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the work tree
		}
		if ext != ".go" {
			for _, w := range word.FindAllString(string(src), -1) {
				known[w] = true
			}
			continue
		}
		var s scanner.Scanner
		s.Init(token.NewFileSet().AddFile(f, -1, len(src)), src, nil, 0)
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok == token.IDENT || tok == token.STRING || tok == token.CHAR {
				for _, w := range word.FindAllString(lit, -1) {
					known[w] = true
				}
			}
		}
	}
	return known
}

// docOf is a declaration's name and its doc comment.
type docOf struct {
	name string
	doc  *ast.CommentGroup
}

// documented lists the file's top-level declarations that have a doc
// comment of their own.
func documented(f *ast.File) []docOf {
	var out []docOf
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Doc != nil {
				out = append(out, docOf{decl.Name.Name, decl.Doc})
			}
		case *ast.GenDecl:
			for _, spec := range decl.Specs {
				doc := decl.Doc
				if len(decl.Specs) > 1 || decl.Lparen.IsValid() {
					doc = nil
				}
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					if spec.Doc != nil {
						doc = spec.Doc
					}
					if doc != nil {
						out = append(out, docOf{spec.Name.Name, doc})
					}
				case *ast.ValueSpec:
					if spec.Doc != nil {
						doc = spec.Doc
					}
					if doc != nil && len(spec.Names) == 1 {
						out = append(out, docOf{spec.Names[0].Name, doc})
					}
				}
			}
		}
	}
	return out
}

// firstWord is the first word of a doc comment after an article.
func firstWord(doc *ast.CommentGroup) string {
	words := strings.Fields(doc.Text())
	if len(words) > 1 && (words[0] == "A" || words[0] == "An" || words[0] == "The") {
		words = words[1:]
	}
	if len(words) == 0 {
		return ""
	}
	return strings.TrimRight(words[0], ".,:;")
}
