from undertow.cluster.cli import main

main()
