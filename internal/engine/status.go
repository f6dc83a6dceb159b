package engine

import "time"

// The states of an engine's workers (a LibreOffice worker, a browser), as
// Status reports them.
const (
	StateStarting = "starting" // being started and warmed up
	StateReady    = "ready"    // idle, waiting for a job
	StateBusy     = "busy"     // running a job
	StateFailed   = "failed"   // its last start failed; will try again
	StateStopped  = "stopped"  // the pool is closed
)

// Counters are an engine pool's events since it started.
type Counters struct {
	Converted  uint64 // jobs answered with a PDF
	Failed     uint64 // jobs answered with an error after reaching a worker
	Restarts   uint64 // workers started to replace another
	Crashes    uint64 // workers that died during a job
	Timeouts   uint64 // workers killed because a job exceeded JobTimeout
	Recycled   uint64 // workers retired after MaxJobsPerWorker jobs or above MaxWorkerRSS
	OverMemory uint64 // workers killed because a job exceeded MaxWorkerMemory
	Retried    uint64 // jobs retried after a crash
	Cold       uint64 // jobs converted by a cold soffice after LibreOfficeKit could not load them (package libreoffice)
}

// Status is a snapshot of an engine's pool, for /v1/health and metrics.
type Status struct {
	Workers     int // configured number of workers
	Ready       int
	Starting    int
	Busy        int
	FailedStart int // workers whose last start failed
	Queued      int // jobs waiting for a worker
	QueueLength int // capacity of the queue
	Counters
	LastError string // the last start failure or crash, if any
	Version   string // the engine's, such as LibreOffice's "25.2.3.2"; "" until a worker is ready
	Details   []WorkerStatus
}

// WorkerStatus describes one worker of a pool.
type WorkerStatus struct {
	ID       int
	State    string
	PID      int   // 0 when no process runs
	Jobs     int   // jobs run by the current process
	RSSBytes int64 // resident memory of the current process
}

// Result is a converted document with the times spent on it. A
// LibreOffice worker closes each document after answering: that time is
// in no field, except as a wait in Total of a job that reaches the worker
// before it is done.
type Result struct {
	Output   []byte        // the converted document: a PDF, or a DOCX (to=docx)
	Pages    int64         // Output's pages as its engine counted them, for metering: 0 for a DOCX, 1 for a screenshot; Conform keeps them
	Engine   time.Duration // the engine's own time (LibreOffice: load and export, measured inside the worker)
	Queued   time.Duration // time the job waited for a worker
	Total    time.Duration // the whole Convert call
	Attempts int           // 2 when the job was retried after a worker crash
	Cold     bool          // converted by a cold soffice (package libreoffice); Engine is then its run time
}
