"""Judge biases: self-preference, position, length."""
