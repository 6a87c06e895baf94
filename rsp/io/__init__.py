"""Reading and writing streams: atom streams for LARS programs, N-Triples with time comments."""
