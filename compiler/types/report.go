package types

import (
	"sort"
	"strings"

	"skydurable/compiler/syntax"
)

// ctxText words a type mismatch for the place it happened.
type ctxText struct {
	title    string
	msg      string
	found    string // label above the found type
	expected string // label above the expected type
	hint     string // a hint for this context, used when no better one applies
	// strong makes hint win over the generic hints.
	strong bool
	// snippet, when set, is the node to mark instead of the failing one.
	snippet syntax.Node
}

// mismatchError reports that found (the type of node) is not expected.
func (c *checker) mismatchError(node syntax.Node, m *mismatch, expected, found Type, cx ctxText) {
	pr := c.printer()
	exp := pr.String(expected)
	fnd := pr.String(found)
	detail := cx.found + "\n\n" + indent(fnd) + "\n\n" + cx.expected + "\n\n" + indent(exp)
	if (m.expected != expected || m.found != found) && !m.infinite && len(m.missing) == 0 && len(m.extra) == 0 {
		ie, ifd := pr.String(m.expected), pr.String(m.found)
		if ie != exp || ifd != fnd {
			if ie != ifd {
				detail += "\n\nThe mismatch is here: `" + ifd + "` where `" + ie + "` was expected."
			}
		}
	}
	hint := c.mismatchHint(node, m, expected, found, pr)
	if hint == "" || cx.strong {
		hint = cx.hint
	}
	title := cx.title
	if title == "" {
		title = "TYPE MISMATCH"
	}
	if cx.snippet != nil {
		node = cx.snippet
	}
	c.errorf(node, title, cx.msg, detail, hint)
}

// mismatchHint picks a hint for the common causes of a mismatch.
func (c *checker) mismatchHint(node syntax.Node, m *mismatch, expected, found Type, pr *Printer) string {
	if m.infinite {
		return "I would need an infinite type here: a value is used as if it contained itself. " +
			"Look for a function applied to itself, or a list put inside itself."
	}
	if len(m.missing) > 0 {
		return "The record is missing the " + fieldList(m.missing) + ". It has " + fieldsOf(m.fieldsOf) + "."
	}
	if len(m.extra) > 0 {
		return "The record has the " + fieldList(m.extra) + " that the expected type does not have; it expects " +
			fieldsOf(m.fieldsOf) + "."
	}
	// A unit-taking function used as its result: `Time.now` for `Time.now ()`.
	if f, ok := unalias(found).(*Fun); ok {
		if t, ok := unalias(f.Arg).(*Tuple); ok && len(t.Elems) == 0 {
			if _, efun := unalias(expected).(*Fun); !efun {
				name := "this function"
				if v, ok := node.(*syntax.Var); ok {
					name = "`" + calleeName(v)[1:len(calleeName(v))-1] + "`"
					return "You may have forgotten `()`: " + name + " takes a unit argument; call it as `" +
						strings.Trim(name, "`") + " ()`."
				}
				return "You may have forgotten `()`: " + name + " takes a unit argument."
			}
		}
		if _, efun := unalias(expected).(*Fun); !efun {
			if app, ok := node.(*syntax.App); ok {
				if ft, ok := c.info.Types[app.Fn]; ok {
					want := arity(ft)
					return calleeName(app.Fn) + " takes " + plural(want, "argument", "arguments") + ", but it is given " +
						plural(len(app.Args), "argument", "arguments") + " here: is an argument missing?"
				}
			}
			return "This is a function, but a value is expected here: maybe it is missing some arguments?"
		}
	}
	if nestedTask(found) && !nestedTask(expected) {
		return "This is a Task that produces another Task. Did you mean Task.andThen? " +
			"Task.map with a function returning a Task nests them; Task.andThen chains them."
	}
	ie, ifd := unalias(m.expected), unalias(m.found)
	if te, ok := ie.(*Tuple); ok {
		if tf, ok := ifd.(*Tuple); ok && len(te.Elems) != len(tf.Elems) {
			return "A tuple of " + plural(len(tf.Elems), "element", "elements") + " is not a tuple of " +
				plural(len(te.Elems), "element", "elements") + "."
		}
	}
	if isCon(ie, "Task") && !isCon(ifd, "Task") {
		if _, isVar := ifd.(*Var); !isVar || ifd.(*Var).Kind != NoConstraint {
			return "A Task is expected where this gives a plain value: wrap it with `Task.succeed`, or use " +
				"Task.map (which takes a plain function) instead of Task.andThen."
		}
	}
	if (isCon(ie, "Int") && isCon(ifd, "Float")) || (isCon(ie, "Float") && isCon(ifd, "Int")) {
		return "Sky does not convert between Int and Float automatically: use `toFloat` to turn an Int into a " +
			"Float, and `round`, `floor`, `ceiling` or `truncate` for the other way."
	}
	if h := sqlValueHint(ie, ifd); h != "" {
		return h
	}
	if m.kind == Number && (isCon(ifd, "String") || isCon(ie, "String")) {
		return "`number` stands for Int or Float, so it cannot be a String here; to turn a number into a " +
			"String, use `String.fromInt` or `String.fromFloat`."
	}
	if m.kind == Number {
		return "Arithmetic works on `number` types only: Int and Float."
	}
	if m.kind == Appendable {
		return "(++) appends Strings or Lists only; to put a number in a String, use `String.fromInt`."
	}
	if m.kind == Comparable || m.kind == CompAppend {
		return "Comparable types are Int, Float, Char, String, Bool, custom types and records of comparables, and lists and tuples of those."
	}
	if (isCon(ie, "String") && isCon(ifd, "Int")) || (isCon(ie, "Int") && isCon(ifd, "String")) {
		return "Use `String.fromInt` to turn an Int into a String, and `String.toInt` for the other way."
	}
	if m.rigid != nil && m.escape {
		return "The type variable `" + pr.String(m.rigid) + "` of this annotation would have to stand for a type " +
			"that comes from outside the definition it annotates. Use the enclosing annotation's variable, " +
			"or remove this annotation."
	}
	if m.rigid != nil {
		return "Your type annotation uses the type variable `" + pr.String(m.rigid) + "`, which means any type " +
			"can flow through, but the code needs a more specific type here. Make the annotation more specific, " +
			"or the code more general."
	}
	if isMaybe(ifd) && !isMaybe(ie) {
		return "This value is a Maybe: use a `case` (Just / Nothing) or `Maybe.withDefault` to get at what is inside."
	}
	return ""
}

// sqlValueHint is the hint for a plain value where Std.Db wants a SqlValue,
// as in `Db.exec db sql [ "a" ]`: name the constructor that wraps it.
func sqlValueHint(expected, found Type) string {
	c, ok := expected.(*Con)
	if !ok || c.Module != "Std.Db" || c.Name != "SqlValue" {
		return ""
	}
	ctor := map[string]string{"String": `SqlString "a"`, "Int": "SqlInt 1", "Float": "SqlFloat 1.5", "Bool": "SqlBool True"}
	example := ""
	if f, ok := found.(*Con); ok && f.Module == "" {
		example = ctor[f.Name]
	}
	if v, ok := found.(*Var); ok && v.Kind == Number {
		example = "SqlInt 1"
	}
	if example == "" {
		return ""
	}
	return "Std.Db takes each parameter as a SqlValue: wrap the value in its constructor, e.g. `" + example +
		"` (the constructors are SqlString, SqlInt, SqlFloat, SqlBool and SqlNull; `import Std.Db exposing (SqlValue(..))` brings them in)."
}

func nestedTask(t Type) bool {
	c, ok := unalias(t).(*Con)
	if !ok || c.Module != "" || c.Name != "Task" || len(c.Args) != 2 {
		return false
	}
	return isCon(c.Args[1], "Task")
}

func isMaybe(t Type) bool {
	c, ok := unalias(t).(*Con)
	return ok && c.Module == preludeName && c.Name == "Maybe"
}

func fieldList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	if len(q) == 1 {
		return q[0] + " field"
	}
	return strings.Join(q, ", ") + " fields"
}

func fieldsOf(r *Record) string {
	if r == nil || len(r.Fields) == 0 {
		return "no fields"
	}
	var names []string
	for n := range r.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	return "these fields: " + strings.Join(names, ", ")
}

// missingField reports an access or update of a field the record lacks.
func (c *checker) missingField(node syntax.Node, recName, field string, r *Record, what string) {
	who := "This record"
	if recName != "" {
		who = "The `" + recName + "` record"
	}
	var names []string
	for n := range r.Fields {
		names = append(names, n)
	}
	sort.Strings(names)
	detail := "It has " + fieldsOf(r) + "."
	hint := didYouMean(field, names)
	if hint == "" && what == "update" {
		hint = "A record update can only change fields the record already has."
	}
	c.errorf(node, "TYPE MISMATCH", who+" does not have a `"+field+"` field:", detail, hint)
}

// arity counts the arrows at the top of a function type.
func arity(t Type) int {
	n := 0
	for {
		f, ok := unalias(t).(*Fun)
		if !ok {
			return n
		}
		n++
		t = f.Res
	}
}
