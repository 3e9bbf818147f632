package durable

import (
	"testing"

	"skydurable/runtime/db/dbtest"
)

// TestMain starts a private PostgreSQL when none answers at
// dbtest.ServerURL, so TestHintWakesAnIdleAppWorker runs on a machine with
// the binaries but no server.
func TestMain(m *testing.M) { dbtest.Main(m) }
