"""What more than one study shares: machine line, SummEval loader and agreement, readings, measurement helpers."""
