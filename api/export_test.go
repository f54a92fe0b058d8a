package api

// SetAnalyticsSlowStatement makes every analytics request of s run stmt (a
// real, slow statement such as SELECT pg_sleep(2)) in its transaction before
// the analysis, to drive the deadline.
func SetAnalyticsSlowStatement(s *Server, stmt string) { s.analyticsSlowStatement = stmt }
