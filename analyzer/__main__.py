from mwms_doctor.console import main

main()
