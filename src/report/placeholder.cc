// Replaced as the area gets its sources.
