"""PersonalRewardBench (SynthesizeMe, arXiv 2506.05598): real users' pairs of Chatbot Arena and PRISM.

Each user's pairs are split train / val / test.
"""

__all__: list[str] = []
