//go:build race

package libreoffice

// raceBuild: the test binary, and so the workers it starts, is built with
// the race detector, whose own memory inflates the kernel's count of a
// worker's peak (a two-million-paragraph job peaked at 962 MiB by VmHWM
// while every sample, 10 ms apart, read at most 385 MiB; 384 MiB without
// the detector).
const raceBuild = true
