"""Entry file for spark-submit, which runs a Python file rather than a console script:

    spark-submit --master yarn ... .../optimizer/pipeline/submit.py pipeline --input ... --output ...

The arguments are those of `kafka-assign`; the master and settings are spark-submit's.
"""

from optimizer.cli import main

if __name__ == "__main__":
    main()
