"""localjudge metrics inside other evaluation frameworks.

`localjudge.integrations.deepeval` makes any localjudge metric a DeepEval metric (install the
`deepeval` extra, then deepeval itself with `--no-deps`: README, DeepEval).
`localjudge.integrations.readout` turns a result record into the reason, score breakdown and log
such frameworks show; it needs no framework.
"""
