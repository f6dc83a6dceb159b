package certpage

import (
	"math"
	"strconv"
)

// appendNum appends a number in PDF syntax: rounded to three decimals, no
// exponent, no trailing zeros.
func appendNum(b []byte, v float64) []byte {
	v = roundNum(v)
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, '0')
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

// roundNum rounds v to the three decimals that numbers are written with.
func roundNum(v float64) float64 { return math.Round(v*1000) / 1000 }
