package types

import (
	"path/filepath"
	"slices"
	"strings"

	"skydurable/compiler/diag"
	"skydurable/compiler/syntax"
)

// UnknownImport is the one report for an import of a module found neither
// in the standard library nor in a project file: where it is imported, the
// modules the standard library provides, and where a project module of
// that name would live. known is every module name available (the stdlib's
// and the project's, for the list and for a did-you-mean); looked is the
// files the loader tried. file and src are the importing file and its
// text. The checker and the evaluator's loader both report it, and names
// used from the module are not reported again.
func UnknownImport(file, src string, imp *syntax.Import, known, looked []string) diag.Diagnostic {
	name := imp.Module.String()
	var stdlib []string
	for _, k := range known {
		if isStdlibModule(k) {
			stdlib = append(stdlib, k)
		}
	}
	slices.Sort(stdlib)
	stdlib = slices.Compact(stdlib)
	provided := wrapWords(listed(stdlib, ","), 76, "    ")
	var detail, hint string
	if isStdlibModule(name) {
		detail = wrapWords(strings.Fields("`"+name+"` is not a module of the standard library this sky provides. Those are:"), 80, "") +
			"\n\n" + provided
		hint = "Remove the import, or use one of the modules above."
	} else {
		home := projectHome(name, looked)
		text := "There is no file " + home + ", where a project module `" + name + "` would live"
		if len(looked) > 0 {
			text += " (I looked for " + strings.Join(listed(looked, ""), " ") + ")"
		}
		detail = wrapWords(strings.Fields(text+"."), 80, "") +
			"\n\nIt is not a standard library module either. Those are:\n\n" + provided
		hint = "Create " + home + " starting with `module " + name + " exposing (..)`, or fix the module name."
	}
	if s := diag.Suggest(name, known); len(s) > 0 && diag.EditDistance(strings.ToLower(name), strings.ToLower(s[0])) <= 2 {
		hint = "Did you mean `" + s[0] + "`?"
	}
	return diag.Diagnostic{
		Title:      "UNKNOWN IMPORT",
		File:       file,
		Start:      diagPos(imp.Module.Start),
		End:        diagPos(imp.Module.End),
		Message:    "I cannot find a module named `" + name + "`:",
		SourceLine: diag.Line(src, imp.Module.Start.Line),
		Detail:     detail,
		Hint:       hint,
	}
}

// projectHome is the file a project module name would be read from: the
// first file looked for under a `src` directory, else the first looked
// for, else src/A/B.sky.
func projectHome(name string, looked []string) string {
	for _, p := range looked {
		if strings.HasPrefix(p, "src"+string(filepath.Separator)) {
			return p
		}
	}
	if len(looked) > 0 {
		return looked[0]
	}
	return filepath.Join(append([]string{"src"}, strings.Split(name, ".")...)...) + ".sky"
}

// listed puts sep after every item but the last, and "and" before the last
// when sep is "" (a list in a sentence).
func listed(items []string, sep string) []string {
	out := slices.Clone(items)
	for i := range out {
		switch {
		case i == len(out)-1:
		case sep == "" && i == len(out)-2:
			out[i] += " and"
		case sep == "":
			out[i] += ","
		default:
			out[i] += sep
		}
	}
	return out
}

// wrapWords joins words with spaces into lines of at most width columns
// (a longer word has a line of its own), each starting with indent.
func wrapWords(words []string, width int, indent string) string {
	var lines []string
	line := indent
	for _, w := range words {
		if line != indent && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}
