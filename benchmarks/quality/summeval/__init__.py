"""Agreement with SummEval's experts: G-Eval scorers, likelihood scorers, the judge ladder, the G-Eval ablation."""
