package codec

// Shape describes the JSON a codec reads and writes, for code that derives
// something from a codec: Std.Db.Store makes a table's columns from a record
// codec's fields. Kind is "text", "int", "real", "bool" or "json" (anything
// stored as JSON text: lists, dicts, tuples, unions, nested records);
// Nullable marks a Maybe; Fields are a record's fields in the order they are
// written (nil for anything else).
type Shape struct {
	Kind     string
	Nullable bool
	Fields   []FieldShape
}

// FieldShape is one field of a record codec: its JSON key and its shape.
type FieldShape struct {
	Key   string
	Shape Shape
}

// ShapeOf is the shape attached to c, or a JSON value of no known kind.
func ShapeOf(c Codec) Shape {
	if s, ok := c.Shape().(Shape); ok {
		return s
	}
	return Shape{Kind: "json"}
}

// SnakeCase spells a camelCase name in snake_case (userName is user_name),
// as Codec.autoWith's snakeCase option and Std.Db.Store's columns do.
func SnakeCase(name string) string { return snakeCase(name) }

func withKind(c Codec, kind string) Codec { return c.WithShape(Shape{Kind: kind}) }

func recordShape(keys []string, codecs []Codec) Shape {
	fields := make([]FieldShape, len(keys))
	for i, k := range keys {
		fields[i] = FieldShape{Key: k, Shape: ShapeOf(codecs[i])}
	}
	return Shape{Kind: "json", Fields: fields}
}
