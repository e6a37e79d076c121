"""Quality: how well the judges agree with people (SummEval, faithfulness, pairwise preference)."""
