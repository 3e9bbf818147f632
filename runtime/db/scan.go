package db

import (
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"skydurable/runtime/task"
)

// scanInto assigns the normalized values of one row to dest, which must have
// one pointer per column.
func scanInto(cols []string, vals []any, dest []any) error {
	if len(dest) != len(vals) {
		return task.Errorf(task.InvalidInput,
			"db: Scan got %d destination(s) but the row has %d column(s) %v", len(dest), len(vals), cols)
	}
	for i, d := range dest {
		if err := assign(d, normalize(vals[i])); err != nil {
			kind := task.Decode
			var bad badDestination
			if errors.As(err, &bad) {
				kind = task.InvalidInput
			}
			return task.Errorf(kind, "db: column %q: %v", colName(cols, i), err)
		}
	}
	return nil
}

func colName(cols []string, i int) string {
	if i < len(cols) {
		return cols[i]
	}
	return strconv.Itoa(i)
}

// assign stores src (a normalized value) in the pointer dest, converting
// between the few representations the two drivers use for the same Sky value.
func assign(dest, src any) error {
	switch d := dest.(type) {
	case *any:
		if b, ok := src.([]byte); ok {
			src = append([]byte(nil), b...)
		}
		*d = src
		return nil
	case *string:
		return assignValue(d, src, toString)
	case *int64:
		return assignValue(d, src, toInt64)
	case *int:
		return assignValue(d, src, func(v any) (int, error) { n, err := toInt64(v); return int(n), err })
	case *float64:
		return assignValue(d, src, toFloat64)
	case *bool:
		return assignValue(d, src, toBool)
	case *time.Time:
		return assignValue(d, src, toTime)
	case *[]byte:
		if src == nil {
			*d = nil
			return nil
		}
		return assignValue(d, src, toBytes)
	case **string:
		return assignPtr(d, src, toString)
	case **int64:
		return assignPtr(d, src, toInt64)
	case **int:
		return assignPtr(d, src, func(v any) (int, error) { n, err := toInt64(v); return int(n), err })
	case **float64:
		return assignPtr(d, src, toFloat64)
	case **bool:
		return assignPtr(d, src, toBool)
	case **time.Time:
		return assignPtr(d, src, toTime)
	case sql.Scanner:
		return d.Scan(src)
	case nil:
		return badDestination("destination is nil; pass a pointer")
	}
	return badDestination(fmt.Sprintf("cannot scan into %T; use *string, *int64, *int, *float64, *bool, *time.Time, *[]byte, *any or a pointer to one of those pointers for NULLs", dest))
}

// badDestination is a Scan destination of a type the package cannot fill:
// a programming error (InvalidInput), not bad data (Decode).
type badDestination string

func (e badDestination) Error() string { return string(e) }

func assignValue[T any](dest *T, src any, conv func(any) (T, error)) error {
	if src == nil {
		return fmt.Errorf("is NULL but the destination %T cannot hold NULL; scan into a %T instead", dest, &dest)
	}
	v, err := conv(src)
	if err != nil {
		return err
	}
	*dest = v
	return nil
}

func assignPtr[T any](dest **T, src any, conv func(any) (T, error)) error {
	if src == nil {
		*dest = nil
		return nil
	}
	v, err := conv(src)
	if err != nil {
		return err
	}
	*dest = &v
	return nil
}

func toString(v any) (string, error) { return textOf(v), nil }

func toBytes(v any) ([]byte, error) {
	if b, ok := v.([]byte); ok {
		return append([]byte(nil), b...), nil
	}
	return []byte(textOf(v)), nil
}

func toInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), nil
		}
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string, []byte:
		s := strings.TrimSpace(textOf(x))
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("value %s is not an integer", describe(v))
}

func toFloat64(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case string, []byte:
		if f, err := strconv.ParseFloat(strings.TrimSpace(textOf(x)), 64); err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("value %s is not a number", describe(v))
}

func toBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case int64:
		if x == 0 || x == 1 {
			return x == 1, nil
		}
	case string, []byte:
		switch strings.ToLower(strings.TrimSpace(textOf(x))) {
		case "1", "t", "true":
			return true, nil
		case "0", "f", "false":
			return false, nil
		}
	}
	return false, fmt.Errorf("value %s is not a boolean", describe(v))
}

func toTime(v any) (time.Time, error) {
	switch x := v.(type) {
	case time.Time:
		return x.UTC(), nil
	case string, []byte:
		t, err := ParseTime(strings.TrimSpace(textOf(x)))
		if err != nil {
			return time.Time{}, fmt.Errorf("value %s is not a time (expected %s)", describe(v), TimeLayout)
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("value %s is not a time", describe(v))
}

func describe(v any) string {
	s := textOf(v)
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return fmt.Sprintf("%q (%T)", s, v)
}
