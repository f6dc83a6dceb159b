//go:build !race

package libreoffice

const raceBuild = false
