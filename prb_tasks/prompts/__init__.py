"""Building what the judge or RM sees: retrieved posts and rendered templates."""

from typing import TYPE_CHECKING

from prb_tasks.common.exports import lazy_exports

if TYPE_CHECKING:
    from prb_tasks.prompts.sandbox import LimitedSandbox, TemplateFeatureRefused, TemplateLimit
    from prb_tasks.prompts.templates import TemplateProblem, TemplateRef, render, resolve

__all__ = [
    "LimitedSandbox",
    "render",
    "resolve",
    "TemplateFeatureRefused",
    "TemplateLimit",
    "TemplateProblem",
    "TemplateRef",
]

__getattr__ = lazy_exports(__name__, {
    "prb_tasks.prompts.sandbox": ("LimitedSandbox", "TemplateFeatureRefused", "TemplateLimit"),
    "prb_tasks.prompts.templates": ("TemplateProblem", "TemplateRef", "render", "resolve"),
})
