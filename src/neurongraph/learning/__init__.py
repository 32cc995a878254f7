"""The learning loop (seed 001): source-use ledger, bounded Hebbian reinforcement of used paths,
outcome and failure ledgers, priming and time decay.  See docs/learning.md."""

from .api import Learning
from .errors import IdempotencyConflict, InvalidStageTransition, NodeNotInTrace, SourceNotUsed
from .policy import OUTCOMES, STAGES, LearningPolicy, OutcomePolicy

__all__ = [
    "Learning",
    "LearningPolicy",
    "OutcomePolicy",
    "STAGES",
    "OUTCOMES",
    "IdempotencyConflict",
    "InvalidStageTransition",
    "NodeNotInTrace",
    "SourceNotUsed",
]
