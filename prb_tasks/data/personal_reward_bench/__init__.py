"""PersonalRewardBench (SynthesizeMe, arXiv 2506.05598): real users' pairs of Chatbot Arena and PRISM,
each user's pairs split train / val / test."""

__all__: list[str] = []
