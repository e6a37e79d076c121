"""Speed: throughput against the hardware floor, where a judge's time goes, load times, llama.cpp beside localjudge."""
