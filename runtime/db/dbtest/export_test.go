package dbtest

// AwaitDrops waits for the test databases being dropped in the background
// (for the external tests of this package).
var AwaitDrops = awaitDrops
