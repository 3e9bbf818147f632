package syntax

import "fmt"

// tokenKind classifies a token.
type tokenKind int

const (
	tEOF   tokenKind = iota
	tLower           // x, Durable.step (module in token.module)
	tUpper           // Just, Durable.FailSafe, and each module name
	tInt
	tFloat
	tChar
	tString
	tMultiString // """…""", parts in token.parts
	tOp          // a symbolic operator: + - * / // % ^ ++ :: == /= < > <= >= && || |> <| >> <<
	tDotField    // .name (access when glued to the previous token, else an accessor)
	tLParen
	tRParen
	tLBracket
	tRBracket
	tLBrace
	tRBrace
	tComma
	tEquals
	tColon
	tArrow
	tPipe
	tDotDot
	tBackslash
	tUnderscore
	tModule
	tExposing
	tImport
	tAs
	tType
	tLet
	tIn
	tCase
	tOf
	tIf
	tThen
	tElse
	tIllegal
)

var keywords = map[string]tokenKind{
	"module":   tModule,
	"exposing": tExposing,
	"import":   tImport,
	"as":       tAs,
	"type":     tType,
	"let":      tLet,
	"in":       tIn,
	"case":     tCase,
	"of":       tOf,
	"if":       tIf,
	"then":     tThen,
	"else":     tElse,
}

// strPart is one piece of a multi-line string: literal text from pos to
// endPos, or the source of a `{{…}}` interpolation starting at pos and
// ending before byte offset end.
type strPart struct {
	text   string
	expr   bool
	pos    Pos
	endPos Pos
	end    int
}

// token is one lexeme with its position and layout facts.
type token struct {
	kind   tokenKind
	text   string // raw source text
	module string // qualifier of tLower/tUpper ("" when unqualified)
	name   string // identifier, operator or field name
	pos    Pos
	end    Pos

	spaceBefore bool // whitespace, a comment or the start of input precedes it
	spaceAfter  bool // whitespace, a comment or the end of input follows it
	first       bool // first token on its line (the layout rule looks at these)

	intVal int64
	// minIntMagnitude marks the literal 9223372036854775808 (or
	// 0x8000000000000000): one past the largest Int, so it is an Int only
	// right after a negating `-`. intVal then holds math.MinInt64, which
	// negation leaves unchanged. The parser reports it anywhere else.
	minIntMagnitude bool
	floatVal        float64
	strVal          string
	charVal         rune
	parts           []strPart
}

func (t token) span() Span { return Span{t.pos, t.end} }

// describe names a token for an error message: "`)`", "the name `foo`", "end of file".
func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "the end of the file"
	case tLower:
		return fmt.Sprintf("the name `%s`", t.text)
	case tUpper:
		return fmt.Sprintf("the name `%s`", t.text)
	case tInt, tFloat:
		return fmt.Sprintf("the number `%s`", t.text)
	case tString, tMultiString:
		return "a string"
	case tChar:
		return fmt.Sprintf("the character %s", t.text)
	case tModule, tExposing, tImport, tAs, tType, tLet, tIn, tCase, tOf, tIf, tThen, tElse:
		return fmt.Sprintf("the keyword `%s`", t.text)
	}
	return fmt.Sprintf("`%s`", t.text)
}
