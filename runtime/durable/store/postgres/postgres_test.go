package postgres

import (
	"testing"

	"skydurable/runtime/db/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }
