"""``prb train``: personalization-aware reward models trained on a family's seen users.

One job per module:

- :mod:`~prb_tasks.train.options`: the command's options, validated (pydantic);
- :mod:`~prb_tasks.train.data`: the training pairs of the seen users (PersonalLLM, your
  own file, Personalized RewardBench rows with their profile as the user), through the
  few-shot protocol's split so the unseen users stay unseen;
- :mod:`~prb_tasks.train.text`: the RM's input text (plain or the backbone's chat
  template) and the user's context text;
- :mod:`~prb_tasks.train.models`: the architectures (``plain``, ``context``, ``latent``,
  ``mixture``), small torch modules over any Hugging Face backbone;
- :mod:`~prb_tasks.train.collate`: examples to tensors;
- :mod:`~prb_tasks.train.trainer`: transformers' ``Trainer`` with the Bradley-Terry loss;
- :mod:`~prb_tasks.train.checkpoint`: the checkpoint folder and its manifest;
- :mod:`~prb_tasks.train.method`: a checkpoint as a ``prb-method`` method;
- :mod:`~prb_tasks.train.command`: the ``prb train`` command.

torch, transformers and accelerate are imported only inside these modules' functions,
so ``prb`` starts without them (the ``train`` extra installs them).
"""

__all__: list[str] = []
