"""The head kind: a metric answered by a linear head on the judge's own hidden states (`localjudge tune --method head`).

A head folder (`heads.folder`) holds the head's weights and a manifest; loading it as a judge
(`load_judge(FOLDER)`) loads its base judge and answers each metric the head was fit for with a
`HeadMetric` of this kind. The features (`kinds.head.features`) are one engine pass per case: the
output read after its source, its tokens' hidden states pooled at a few layers, and its
log-probabilities.
"""

from localjudge.kinds.head.kind import HEAD, HeadKind
from localjudge.kinds.head.spec import FeatureSpec, HeadMetric, HeadReading

__all__ = ["HEAD", "FeatureSpec", "HeadKind", "HeadMetric", "HeadReading"]
