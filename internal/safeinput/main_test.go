package safeinput

// testLimits are the limits of an engine with its defaults.
func testLimits() Limits {
	return Limits{MaxInputBytes: DefaultMaxInputBytes, MaxExpandedBytes: DefaultMaxExpandedBytes, MaxCompressionRatio: DefaultMaxCompressionRatio}
}
