"""The built-in smoke family: a generated company database and questions with two tool-disjoint plans each."""
