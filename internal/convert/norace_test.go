//go:build !race

package convert

const raceBuild = false
