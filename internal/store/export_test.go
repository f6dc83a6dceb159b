package store

// Pragma returns the value of a SQLite pragma on one of db's connections.
func (db *DB) Pragma(name string) (string, error) {
	var v string
	err := db.sql.QueryRow("PRAGMA " + name).Scan(&v)
	return v, err
}

// Pragmas returns the value of a SQLite pragma on a connection of each of
// db's files: the main file, then the event log.
func (db *DB) Pragmas(name string) ([]string, error) {
	var out []string
	for _, d := range []*DB{db, db.log} {
		v, err := d.Pragma(name)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
